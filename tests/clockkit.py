"""The instant clock-dependent tests start from (the ``frozen_clock`` fixture): a
Wednesday's 12:30 UTC, or ``HITBOARD_TEST_NOW`` (ISO 8601, e.g. 2026-12-31T23:59:30Z) to
run them at another hour (``scripts/check-clock.sh``)."""

import datetime as dt
import email.utils
import os
import urllib.request

MIDDAY = dt.datetime(2026, 3, 18, 12, 30, tzinfo=dt.UTC)
TEST_NOW = (dt.datetime.fromisoformat(os.environ["HITBOARD_TEST_NOW"]).astimezone(dt.UTC)
            if os.environ.get("HITBOARD_TEST_NOW") else MIDDAY)


def server_clock(url: str) -> dt.datetime:
    """The instant a server's answer to ``url`` is dated (its ``Date`` header, to the
    second): a server in another process keeps the real clock, out of ``frozen_clock``'s
    reach, so a test reads the hours it stamped hits with from the server itself."""
    with urllib.request.urlopen(url, timeout=5) as response:
        return email.utils.parsedate_to_datetime(response.headers["Date"])
