"""The Stats API's answers: which representation counts a :class:`StatsQuery`, and
the rows it gives (the same reads as History, ``report`` and ``breakdown``, so the
figures agree).

The counters answer the totals, one dimension, or one ``is`` filter on one value over
any range: hits from the statistics, visitors from the sketches, visits from
``visits.*``, goals and custom events from their cells, a dimension's values from the
dimension counters. Anything else under filters (another operator, several values or
filters, ``and``/``or``/``not``, a filter beside a grouping) is counted from the raw
events (``stats_events``), within their retention; but pageviews, custom events and
visits under page filters come from the visits' documents (``stats_visits``). Several
dimensions: ``stats_grid``.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field, replace

from .. import validation
from ..custom import reads as custom_reads
from ..dimensions import reads as dims
from ..dimensions.spans import approximate_note
from ..stats.series import bucket_edges
from ..stats.sites import site_settings
from ..visits import reads as visit_reads
from .history import chart
from .query import COUNTERS, EVENTS, PAGE, STATS, VISITS
from .stats_events import check_kept, from_events
from .stats_query import (
    COUNTED,
    EVENT_METRICS,
    HIT_METRICS,
    METRICS,
    PROPS,
    VISIT_METRICS,
    VISIT_PAGES,
    StatsQuery,
    simple_is,
)
from .stats_visits import answer_filtered, events_by_bucket, filtered_offered, from_visits

CUSTOM_EVENTS = "custom events"
VISIT_PAGE_METRICS = ("visits", "bounce_rate", "visit_duration")
RATES = ("bounce_rate", "visit_duration", "views_per_visit", "conversion_rate")


@dataclass
class Answer:
    """Rows of (dimension values, metric -> value), where they were counted, and what
    is approximate about them (sentences)."""

    rows: list[tuple[tuple[str, ...], dict]]
    source: str
    notes: list[str] = field(default_factory=list)


def offered(dimension: str | None, filters: tuple = ()) -> tuple[str, ...]:
    """The metrics a query of ``dimension`` (None: totals) under ``filters`` can ask for."""
    if filters:
        return filtered_offered(filters, dimension)
    if dimension is None:
        return tuple(m for m in METRICS if m != "conversion_rate")
    if dimension.startswith("time"):
        return (*HIT_METRICS, *VISIT_METRICS, "events")
    if dimension in COUNTED:
        return HIT_METRICS
    if dimension in VISIT_PAGES:
        return VISIT_PAGE_METRICS
    return EVENT_METRICS


def answer(db, q: StatsQuery, events_ttl_days: int) -> Answer:
    if q.filters:
        if from_visits(q) and not set(q.metrics) <= set(HIT_METRICS):
            return _visit_filtered(db, q, events_ttl_days)
        return _filtered(db, q, events_ttl_days)
    if q.dimension is None:
        return _totals(db, q)
    if q.granularity is not None:
        return _time_series(db, q)
    if q.dimension in COUNTED:
        return _counted(db, q)
    if q.dimension in VISIT_PAGES:
        return _visit_pages(db, q)
    return _custom(db, q)


# -- without filters: the counters -------------------------------------------------------

def _totals(db, q: StatsQuery) -> Answer:
    found, notes, sources = {}, [], []
    if "hits" in q.metrics:
        found["hits"] = _hits(db, q, q.start, q.end)
        sources.append(STATS)
    if "visitors" in q.metrics:
        seen = dims.visitors(db, q.site, q.start, q.end, humans=q.humans, now=q.now)
        found["visitors"] = seen.n
        _visitor_notes(seen, q, notes)
        sources.append(COUNTERS)
    if set(q.metrics) & set(VISIT_METRICS):
        totals = visit_reads.totals(db, q.site, q.start, q.end, now=q.now)
        found.update(visits=totals.visits, pageviews=totals.pageviews,
                     bounce_rate=totals.bounce_rate, visit_duration=totals.visit_duration,
                     views_per_visit=totals.views_per_visit)
        _quarter_note(totals.exact, notes)
        sources.append(VISITS)
    if "events" in q.metrics:
        frame = custom_reads.events(db, q.site, q.start, q.end, now=q.now)
        found["events"] = int(frame["conversions"].sum())
        sources.append(CUSTOM_EVENTS)
    return Answer([((), _shown(found, q.metrics))], ", ".join(sources), notes)


def _hits(db, q: StatsQuery, start: dt.datetime, end: dt.datetime,
          pages: tuple[str, ...] = ()) -> int:
    """People's hits (everyone's if not ``q.humans``) of the site or of ``pages`` over
    [start, end), from the statistics: exact to the minute in any zone."""
    drawn = chart(db, q.site, start, end, "day", q.tz, pages, humans=q.humans, now=q.now)
    return int(drawn.frame.to_numpy().sum())


def _time_series(db, q: StatsQuery) -> Answer:
    buckets = time_buckets(q.start, q.end, q.granularity, q.tz)
    columns: dict[str, dict[str, object]] = {}
    notes: list[str] = []
    sources = []
    if "hits" in q.metrics:
        sources.append(STATS)
        drawn = "hour" if q.granularity == "hour" else "day"     # weeks, months: days summed
        frame = chart(db, q.site, q.start, q.end, drawn, q.tz, humans=q.humans,
                      now=q.now).frame
        hits: dict[str, int] = {}
        for t, v in frame.iloc[:, 0].items():
            name = label(bucket_start(t, q.granularity), q.granularity, q.tz)
            hits[name] = hits.get(name, 0) + int(v)
        columns["hits"] = hits
    if "visitors" in q.metrics:
        sources.append(COUNTERS)
        if q.granularity in ("hour", "day"):
            frame = dims.visitors_series(db, q.site, q.start, q.end, q.granularity, q.tz,
                                         humans=q.humans, now=q.now)
            columns["visitors"] = {label(t, q.granularity, q.tz): _count(v)
                                   for t, v in frame["visitors"].items()}
            if not frame.attrs.get("exact", True):
                notes.append("some buckets' visitors count the whole UTC hours nearest "
                             "them (the raw events of the hours they cut are gone)")
        else:
            columns["visitors"] = {}
            for name, a, b in buckets:
                seen = dims.visitors(db, q.site, a, b, humans=q.humans, now=q.now)
                columns["visitors"][name] = seen.n
                _visitor_notes(seen, q, notes)
    wanted = [m for m in q.metrics if m in VISIT_METRICS]
    if wanted:
        sources.append(VISITS)
        frame = visit_reads.series(db, q.site, q.start, q.end, q.granularity, q.tz)
        for metric in wanted:
            columns[metric] = {label(t, q.granularity, q.tz): v
                               for t, v in frame[metric].items()}
        _quarter_note(frame.attrs["exact"], notes)
    if "events" in q.metrics:
        sources.append(CUSTOM_EVENTS)
        columns["events"] = events_by_bucket(db, q, buckets)
        _quarter_note(visit_reads.is_exact(q.start, q.end, q.now), notes)
    rows = []
    for name, _, _ in buckets:
        found = {m: columns[m].get(name) for m in q.metrics}
        rows.append(((name,), _shown(found, q.metrics)))
    return Answer(rows, ", ".join(sources), sorted(set(notes)))


def _counted(db, q: StatsQuery) -> Answer:
    frame = dims.breakdown(db, q.site, COUNTED[q.dimension], q.start, q.end,
                           humans=q.humans, now=q.now)
    rows = [((row.value,), _shown({"hits": row.hits, "visitors": row.visitors}, q.metrics))
            for row in frame.itertuples()]
    notes = [frame.attrs["note"]] if frame.attrs.get("note") else []
    if not frame.attrs.get("exact", True):
        notes.append(approximate_note(frame.attrs["counted"], q.tz, "Hits"))
    elif not frame.attrs.get("visitors_exact", True) and "visitors" in q.metrics:
        notes.append("visitors per value come from the sketches of whole UTC days (the "
                     "raw events of the range's other hours are gone)")
    return Answer(rows, COUNTERS, notes)


def _visit_pages(db, q: StatsQuery) -> Answer:
    frame = visit_reads.pages(db, q.site, q.start, q.end, VISIT_PAGES[q.dimension])
    rows = [((row.value,), _shown({"visits": row.visits, "bounce_rate": row.bounce_rate,
                                   "visit_duration": row.visit_duration}, q.metrics))
            for row in frame.itertuples()]
    notes: list[str] = []
    _quarter_note(frame.attrs["exact"], notes)
    return Answer(rows, VISITS, notes)


def _custom(db, q: StatsQuery) -> Answer:
    if q.dimension == "event:goal":
        frame = custom_reads.goals(db, q.site, q.start, q.end,
                                   site_settings(db, q.site).goals, now=q.now)
    elif q.dimension == "event:name":
        frame = custom_reads.events(db, q.site, q.start, q.end, now=q.now)
    else:
        frame = custom_reads.props(db, q.site, q.start, q.end, q.dimension[len(PROPS):],
                                   now=q.now)
    rows = [((row.value,), _shown({"events": row.conversions, "visitors": row.visitors,
                                   "conversion_rate": row.conversion_rate}, q.metrics))
            for row in frame.itertuples()]
    notes: list[str] = []
    _quarter_note(visit_reads.is_exact(q.start, q.end, q.now), notes)
    return Answer(rows, CUSTOM_EVENTS, notes)


# -- under filters: the counters for one value, else the raw events ----------------------

def _filtered(db, q: StatsQuery, events_ttl_days: int) -> Answer:
    one = simple_is(q.filters)
    pages = (one.values[0],) if one is not None and one.counted == PAGE else ()
    if one is not None and q.dimension is None and set(q.metrics) <= set(HIT_METRICS):
        frame = dims.breakdown(db, q.site, one.counted, q.start, q.end, humans=q.humans,
                               now=q.now)
        row = frame[frame["value"] == one.values[0]]
        found = {"hits": _hits(db, q, q.start, q.end, pages) if pages
                 else int(row["hits"].sum()),
                 "visitors": _count(row["visitors"].iloc[0]) if len(row) else 0}
        notes = [] if frame.attrs.get("exact", True) or pages else [
            approximate_note(frame.attrs["counted"], q.tz, "Hits")]
        return Answer([((), _shown(found, q.metrics))], STATS if pages else COUNTERS, notes)
    if one is not None and q.granularity in ("hour", "day") and q.metrics == ("hits",):
        drawn = chart(db, q.site, q.start, q.end, q.granularity, q.tz, pages=pages,
                      filter=None if pages else (one.counted, one.values[0]),
                      humans=q.humans, now=q.now)
        rows = [((label(t, q.granularity, q.tz),), {"hits": int(v)})
                for t, v in drawn.frame.iloc[:, 0].items()]
        notes = [] if drawn.exact else [approximate_note(drawn.counted, q.tz, "Hits")]
        return Answer(rows, STATS if pages else COUNTERS, notes)
    check_kept(db, q, events_ttl_days)
    if q.granularity is not None:
        rows = []
        for name, a, b in time_buckets(q.start, q.end, q.granularity, q.tz):
            (_, found), = from_events(db, q, a, b) or [((), {})]
            rows.append(((name,), _shown(found, q.metrics)))
        return Answer(rows, EVENTS)
    by = COUNTED.get(q.dimension) if q.dimension else None
    rows = from_events(db, q, q.start, q.end, (by,) if by else ())
    if by is None and not rows:
        rows = [((), {})]
    return Answer([(values, _shown(found, q.metrics)) for values, found in rows], EVENTS)


def _visit_filtered(db, q: StatsQuery, events_ttl_days: int) -> Answer:
    """Page metrics from the visits' documents (``stats_visits``), hits and visitors
    beside them as any filtered query's, the rows joined by bucket."""
    buckets = (time_buckets(q.start, q.end, q.granularity, q.tz) if q.granularity
               else [(None, q.start, q.end)])
    found, exact = answer_filtered(db, q, buckets)
    notes: list[str] = []
    _quarter_note(exact, notes)
    sources = [VISITS]
    hit_metrics = tuple(m for m in q.metrics if m in HIT_METRICS)
    if hit_metrics:
        hits = _filtered(db, replace(q, metrics=hit_metrics), events_ttl_days)
        sources.insert(0, hits.source)
        notes += hits.notes
        for values, figures in hits.rows:
            found.setdefault(values[0] if values else None, {}).update(figures)
    rows = [(() if name is None else (name,), _shown(found.get(name, {}), q.metrics))
            for name, _, _ in buckets]
    return Answer(rows, ", ".join(sources), notes)


# -- shared pieces ------------------------------------------------------------------------

def time_buckets(start: dt.datetime, end: dt.datetime, granularity: str,
                 tz: str) -> list[tuple[str, dt.datetime, dt.datetime]]:
    """(label, start, end) of each local bucket of ``tz`` over [start, end), cut to it
    (weeks start on Monday)."""
    zone = validation.timezone(tz)
    if granularity in ("hour", "day"):
        edges = bucket_edges(start, end, granularity, zone)
    else:
        day = start.astimezone(zone).date()
        day = day - dt.timedelta(days=day.weekday()) if granularity == "week" \
            else day.replace(day=1)
        edges = [_utc(day, zone)]
        while edges[-1] < end:
            day = day + dt.timedelta(days=7) if granularity == "week" \
                else (day + dt.timedelta(days=32)).replace(day=1)
            edges.append(_utc(day, zone))
    return [(label(a, granularity, tz), max(a, start), min(b, end))
            for a, b in zip(edges, edges[1:], strict=False) if max(a, start) < min(b, end)]


def bucket_start(when: dt.datetime, granularity: str) -> dt.datetime:
    """The start of the local week (Monday) or month holding ``when`` (a local day's
    start); an hour or a day is its own."""
    if granularity == "week":
        return when - dt.timedelta(days=when.weekday())
    if granularity == "month":
        return when.replace(day=1)
    return when


def _utc(day: dt.date, zone) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, tzinfo=zone).astimezone(dt.UTC)


def label(when: dt.datetime, granularity: str, tz: str | None = None) -> str:
    """A bucket as Plausible names it: ``2015-05-17 10:00:00`` an hour, else its day."""
    if tz is not None:
        when = when.astimezone(validation.timezone(tz))
    if granularity == "hour":
        return when.strftime("%Y-%m-%d %H:00:00")
    return when.strftime("%Y-%m-%d")


def _count(value) -> int | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):       # pandas' NA
        return None


def _shown(found: dict, metrics: tuple[str, ...]) -> dict:
    """The asked metrics as the API writes them: counts whole, rates and means to two
    decimals (as ``report`` prints them), None where there is nothing to divide."""
    out = {}
    for metric in metrics:
        value = found.get(metric)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            out[metric] = None if metric in RATES else 0
        elif metric in RATES:
            out[metric] = round(float(value), 2)
        else:
            out[metric] = _count(value) or 0
    return out


def _visitor_notes(seen, q: StatsQuery, notes: list[str]) -> None:
    if not seen.exact:
        notes.append(approximate_note(seen.counted, q.tz, "Visitors"))


def _quarter_note(exact: bool, notes: list[str]) -> None:
    if not exact:
        notes.append("the range cuts a quarter hour, which counts whole (visits are "
                     "stored per quarter hour of their first pageview)")
