"""The instant clock-dependent tests start from (the ``frozen_clock`` fixture): a
Wednesday's 12:30 UTC, or ``HITBOARD_TEST_NOW`` (ISO 8601, e.g. 2026-12-31T23:59:30Z) to
run them at another hour (``scripts/check-clock.sh``)."""

import datetime as dt
import os

MIDDAY = dt.datetime(2026, 3, 18, 12, 30, tzinfo=dt.UTC)
TEST_NOW = (dt.datetime.fromisoformat(os.environ["HITBOARD_TEST_NOW"]).astimezone(dt.UTC)
            if os.environ.get("HITBOARD_TEST_NOW") else MIDDAY)
