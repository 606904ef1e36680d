"""Which stored data counts each part of a range exactly.

Dimension counters and visitor sketches are kept per UTC hour at the finest. A range
whose edges cut an hour (a day in Asia/Kolkata starts at 18:30 UTC; a custom range at
06:10) is counted in three parts: its whole UTC hours from the counters, and the parts
of the hours it cuts from the raw events of those hours (:class:`Cover`). The events
count only when they hold every hit of their hour (as many as its counters)
and when the cut hours hold at most ``EVENTS_BUDGET`` events together; otherwise (events
expired, never written, or too many to read) the range is counted over the whole UTC
hours nearest its edges instead, and the cover says so (``exact`` false, ``counted`` the
span really counted). An edge in the hour still under way needs no events: its counters
hold nothing later than now, so that hour is read whole. A range starting within that
hour reads its part of it from the events when they hold nearly all of its hits so far
(``LIVE_COVERED``: the events and the counters are flushed a second or so apart).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from .. import validation
from ..events import reads as event_reads
from ..stats.series import bucket_edges
from . import sketches
from .counters import HOURLY

HOUR, DAY = dt.timedelta(hours=1), dt.timedelta(days=1)
EVENTS_BUDGET = 100_000      # events read, at most, to count the cut parts of hours
LIVE_COVERED = 0.95
Span = tuple[dt.datetime, dt.datetime]


@dataclass(frozen=True)
class Cover:
    """How ``span`` is counted: the whole UTC hours ``hours`` from the counters and
    sketches, ``events`` (parts of cut hours) from the raw events. Not ``exact``: the
    nearest whole hours stand for it (``counted``)."""

    span: Span
    hours: Span
    events: tuple[Span, ...] = ()
    exact: bool = True

    @property
    def counted(self) -> Span:
        return self.span if self.exact else self.hours


def floor_hour(t: dt.datetime) -> dt.datetime:
    return t.astimezone(dt.UTC).replace(minute=0, second=0, microsecond=0)


def ceil_hour(t: dt.datetime) -> dt.datetime:
    floor = floor_hour(t)
    return floor if floor == t else floor + HOUR


def nearest_hour(t: dt.datetime) -> dt.datetime:
    """The UTC hour edge nearest ``t`` (half an hour goes up)."""
    return floor_hour(t + HOUR / 2)


def covers(db, site: str, spans: Sequence[Span], now: dt.datetime | None = None,
           budget: int = EVENTS_BUDGET) -> list[Cover]:
    """The cover of each span (consecutive buckets of a chart, or one range). Spans
    that share a cut hour count it alike: each its own side from the events, or both
    at the same nearest hour edge, so no hit counts twice."""
    live = floor_hour(now or dt.datetime.now(dt.UTC))
    plans = [_plan(span, live) for span in spans]
    cut = sorted({floor_hour(a) for _, pieces in plans for a, _ in pieces})
    complete = complete_hours(db, site, cut, budget, live)
    out = []
    for (start, end), (hours, pieces) in zip(spans, plans, strict=True):
        if all(floor_hour(a) in complete for a, _ in pieces):
            out.append(Cover((start, end), hours, tuple(pieces)))
        else:
            first = nearest_hour(start)
            last = ceil_hour(end) if end > live else nearest_hour(end)
            if first >= last:                # nothing near: the hour holding the start
                first, last = floor_hour(start), max(last, floor_hour(start) + HOUR)
            out.append(Cover((start, end), (first, last), exact=False))
    return out


def bucket_covers(db, site: str, start, end, granularity: str, tz,
                  now: dt.datetime | None = None) -> tuple[list[dt.datetime], list[Cover]]:
    """A chart's buckets (each hour or day of ``tz`` in [start, end)): their first
    edges, in ``tz``, and their covers."""
    site = validation.site(site)
    start, end = validation.time_range(start, end)
    zone = validation.timezone(tz)
    edges = bucket_edges(start, end, granularity, zone)
    spans = [(max(a, start), min(b, end)) for a, b in zip(edges, edges[1:], strict=False)]
    return [edge.astimezone(zone) for edge in edges], covers(db, site, spans, now)


def cover(db, site: str, start: dt.datetime, end: dt.datetime,
          now: dt.datetime | None = None, budget: int = EVENTS_BUDGET) -> Cover:
    return covers(db, site, [(start, end)], now, budget)[0]


def _plan(span: Span, live: dt.datetime) -> tuple[Span, list[Span]]:
    """The whole UTC hours of ``span`` and the parts of the hours it cuts; a part in
    the live hour (or later) is read whole from the counters."""
    start, end = span
    lo = ceil_hour(start)
    hi = ceil_hour(end) if end > live else floor_hour(end)
    if lo > hi:                              # inside one past hour
        return (lo, lo), [(start, end)]
    pieces = [(start, lo)] if start < lo else []
    if hi < end:
        pieces.append((hi, end))
    return (lo, hi), pieces


def complete_hours(db, site: str, hours: list[dt.datetime], budget: int,
                   live: dt.datetime) -> set:
    """The hours whose raw events hold all their hits (as many events as the hour's
    counters count; the live hour nearly all), if their events number ``budget`` at
    most together (else none). Consecutive hours are checked together: events are never
    more than the hits of their hours, so equal sums mean every hour is whole."""
    if not hours:
        return set()
    counted = _hourly_hits(db, site, hours)
    complete, total = set(), 0
    for start, end in event_reads.runs(sorted(set(hours))):
        events = event_reads.count(db, site, start, end, budget - total)
        total += events
        if total > budget:
            return set()
        run = [start + i * HOUR for i in range(int((end - start) / HOUR))]
        hits = sum(counted.get(hour, 0) for hour in run)
        if events == hits or (end > live and events >= LIVE_COVERED * hits):
            complete.update(run)
    return complete


def _hourly_hits(db, site: str, hours: list[dt.datetime]) -> dict[dt.datetime, int]:
    """The hits each hour's dimension counters hold (what the events must complete)."""
    ids = {sketches.bucket_id(site, hour, "hour"): hour for hour in hours}
    return {ids[doc["_id"]]: doc.get("hits", 0)
            for doc in db[HOURLY].find({"_id": {"$in": list(ids)}}, {"hits": 1})}


def approximate_note(counted: Span, tz, what: str = "These figures") -> str:
    """What a figure counted when it is not its range's own, in ``tz``'s words."""
    zone = validation.timezone(tz)
    first, last = (t.astimezone(zone) for t in counted)
    same_day = first.date() == last.date()
    shown = (f"{first:%H:%M}–{last:%H:%M}" if same_day
             else f"{first:%Y-%m-%d %H:%M} → {last:%Y-%m-%d %H:%M}")
    return (f"{what} count {shown} ({zone}), the whole UTC hours nearest the range: "
            "the counters are kept per UTC hour, and the raw events of the hours the "
            "range cuts are no longer kept (or too many to read)")
