"""The Live page's people: visits begun in the last minutes, cut from the raw events (the
stored visits trail the events by a rollup run), and how much of a window's traffic those
raw events hold. The hits come from the counters, which every source writes; the people
from the raw events, which a backfill (the demo's) and ``--no-events`` do not: right after
a backfill, the last minutes' counters hold thousands of hits and their raw events the
few of live traffic, and a visitor count read from those few would stand beside the hits
as if it counted the same traffic."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable
from typing import NamedTuple

from ..dimensions.reads import COVERED
from ..events import reads as event_reads
from ..stats.series import series
from ..visits.build import recent

RECENT_MINUTES = 30     # "visits begun in the last 30 minutes", on Live and the presenter
MINUTE = dt.timedelta(minutes=1)


class Coverage(NamedTuple):
    """A window's raw events against the hits its counters hold (bots included in both);
    the events are counted no further than it takes to know the window covered."""

    events: int
    hits: int

    @property
    def complete(self) -> bool:
        """Whether the raw events hold the window's traffic (``COVERED`` of its hits, as
        Live's referrers ask: the live minute's counters and events flush apart)."""
        return self.events >= COVERED * self.hits


def recent_visits(db, site: str, now: dt.datetime, minutes: int = RECENT_MINUTES) -> int:
    """People's visits whose first pageview lies in the ``minutes`` before ``now``."""
    return recent(db, site, now, minutes)


def event_coverage(db, site: str, now: dt.datetime, windows: Iterable[int]
                   ) -> dict[int, Coverage]:
    """Per window of the last ``minutes`` before ``now``, its raw events and counted hits
    over the whole minutes that hold it (the counters count per minute: both over the
    same minutes, the running one so far). One read of the counters for them all; the
    raw events' buckets read until ``COVERED`` of the hits are found (a busy site's half
    hour holds millions)."""
    end = now + dt.timedelta(microseconds=1)
    starts = {minutes: (now - minutes * MINUTE).replace(second=0, microsecond=0)
              for minutes in windows}
    if not starts:
        return {}
    per_minute = series(db, site, min(starts.values()), end, "minute").sum(axis=1)
    found = {}
    for minutes, start in starts.items():
        hits = int(per_minute[per_minute.index >= start].sum())
        enough = math.ceil(COVERED * hits) - 1      # once past it, the window is covered
        found[minutes] = Coverage(event_reads.count(db, site, start, end, limit=enough),
                                  hits)
    return found
