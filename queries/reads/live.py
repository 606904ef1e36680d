"""The Live page's visits: those begun in the last minutes, cut from the raw events
(the stored visits trail the events by a rollup run)."""

from __future__ import annotations

import datetime as dt

from ..visits.build import recent

RECENT_MINUTES = 30     # "visits begun in the last 30 minutes", on Live and the presenter


def recent_visits(db, site: str, now: dt.datetime, minutes: int = RECENT_MINUTES) -> int:
    """People's visits whose first pageview lies in the ``minutes`` before ``now``."""
    return recent(db, site, now, minutes)
