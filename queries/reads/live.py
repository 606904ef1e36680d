"""The Live page's reads and the presenter's live ones: which representation answers each
figure is chosen here (the statistics for hits, the ``page`` dimension for top pages, raw
events for people and the last hour's referrers), never in a page.

Visits begun in the last minutes are cut from the raw events (the stored visits trail the
events by a rollup run), and each window says how much of its traffic those raw events
hold. The hits come from the counters, which every source writes; the people from the
raw events, which a backfill (the demo's) and ``--no-events`` do not: right after a
backfill, the last minutes' counters hold thousands of hits and their raw events the few
of live traffic, and a visitor count read from those few would stand beside the hits as
if it counted the same traffic."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable
from typing import NamedTuple

import pandas as pd

from .. import validation
from ..dimensions.page_reads import MAX_SCANNED, Active
from ..dimensions.pages import ranked_pages
from ..dimensions.reads import COVERED, active_visitors, recent_breakdown
from ..events import reads as event_reads
from ..events.recent import recent_hits
from ..stats.kpis import HitTotals, hit_totals
from ..stats.series import minute_series, series
from ..visits.build import recent

__all__ = ["MAX_SCANNED", "Active", "Coverage", "People", "Snapshot", "newest_hits", "people",
           "recent_visits", "snapshot", "top_today"]

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


# -- Live's and the presenter's read doors: the representation of each figure chosen here,
# the pages only cache and draw what these return.

TOP_N = 10          # "Top pages today", wherever it shows
ACTIVE_MINUTES = 5  # "visitors active now"
REFERRERS_N = 8     # Live's "Referrers, last hour"


def top_today(db, site: str, now: dt.datetime, tz: str, humans: bool = True):
    """"Top pages today" wherever it shows (Live, the presenter's list and its top view):
    people's page views since local midnight as History ranks them (the ``page``
    dimension's counters), bots left out unless ``humans`` is false, static files left
    out."""
    return ranked_pages(db, site, validation.local_midnight(now, tz), now + MINUTE, n=TOP_N,
                        humans=humans)


class Snapshot(NamedTuple):
    """Live's chart and cards: hits per minute of the window (the statistics' minutes),
    hits this minute, hour and day (their totals) and the top pages today."""

    series: pd.DataFrame
    totals: HitTotals
    top: pd.DataFrame


def snapshot(db, site: str, pages: tuple[str, ...], tz: str, now: dt.datetime,
             window_minutes: int, humans: bool = True) -> Snapshot:
    """Everything Live's chart and cards show as of ``now``, in one read."""
    minute = now.replace(second=0, microsecond=0)     # the current one: even at :00
    return Snapshot(
        series=minute_series(db, site, minute - dt.timedelta(minutes=window_minutes),
                             minute + MINUTE, pages=pages, tz=tz),
        totals=hit_totals(db, site, now, pages=pages, tz=tz),
        top=top_today(db, site, now, tz, humans))


class People(NamedTuple):
    """Live's people, from raw events: visitors active in the last ``ACTIVE_MINUTES`` and
    in the last minute, the visits begun in the last ``RECENT_MINUTES``, how much of each
    window the raw events hold, and the last hour's referrers."""

    active: Active
    minute: Active
    visits: int
    covered: dict[int, Coverage]
    referrers: pd.DataFrame


def people(db, site: str, now: dt.datetime, humans: bool = True) -> People:
    """Live's people panel group in one read (humans only unless ``humans`` is false)."""
    return People(
        active=active_visitors(db, site, now, ACTIVE_MINUTES, humans=humans),
        minute=active_visitors(db, site, now, 1, humans=humans),
        visits=recent_visits(db, site, now, RECENT_MINUTES),
        covered=event_coverage(db, site, now, (ACTIVE_MINUTES, 1, RECENT_MINUTES)),
        referrers=recent_breakdown(db, site, "referrer", now - dt.timedelta(hours=1), now,
                                   n=REFERRERS_N, humans=humans))


def newest_hits(db, site: str, pages: tuple[str, ...], n: int) -> list[dict]:
    """The recent-hits feed: the ``n`` newest raw requests of the site (or its ``pages``)."""
    return recent_hits(db, site, pages, n)
