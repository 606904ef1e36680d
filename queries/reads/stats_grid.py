"""The Stats API by several dimensions (``["time:day", "event:page"]``,
``["visit:country", "visit:browser"]``): which representation counts them, and the rows.

Time and one other dimension, without filters: the counters, bucket by bucket, each
bucket answered as that dimension alone is (the reads of ``breakdown``), so every
metric the dimension offers, over any range. Anything else (two dimensions beside time,
a dimension beside filters, pageviews beside a dimension no counter holds them by) is a
combination no counter holds: the raw events count its hits, visitors and pageviews,
within their retention, for the dimensions they classify.
"""

from __future__ import annotations

from dataclasses import replace

from .stats_api import Answer, answer, offered, time_buckets
from .stats_events import check_kept, from_events
from .stats_query import COUNTED, RAW_METRICS, TIME, StatsQuery

MAX_DIMENSIONS = 3
MAX_GRID_BUCKETS = 1_000    # time beside a dimension: one read per bucket


def split(dimensions: tuple[str, ...]) -> tuple[str | None, tuple[str, ...]]:
    """The time dimension (None: none) and the others, in the order asked."""
    times = [d for d in dimensions if d.startswith(TIME)]
    return (times[0] if times else None), tuple(d for d in dimensions
                                                if not d.startswith(TIME))


def by_counters(dimensions: tuple[str, ...], filtered: bool,
                metrics: tuple[str, ...] = ()) -> bool:
    """Whether the counters answer: time and one other dimension, no filter, metrics
    that dimension offers alone."""
    time, others = split(dimensions)
    return (time is not None and len(others) == 1 and not filtered
            and set(metrics) <= set(offered(others[0])))


def grid_offered(dimensions: tuple[str, ...], filtered: bool) -> tuple[str, ...]:
    """The metrics a query of several ``dimensions`` can ask for: those the counters
    give (time and one dimension), else those of the raw events."""
    _, others = split(dimensions)
    counters = offered(others[0]) if by_counters(dimensions, filtered) else ()
    events = RAW_METRICS if all(d in COUNTED for d in others) else ()
    return tuple(dict.fromkeys((*counters, *events)))


def grid_refusal(dimensions: tuple[str, ...], filtered: bool) -> str | None:
    """Why neither the counters nor the raw events can group by ``dimensions`` (None:
    one of them can)."""
    if by_counters(dimensions, filtered):
        return None
    for i, name in enumerate(dimensions):
        if not name.startswith(TIME) and name not in COUNTED:
            why = "beside filters" if filtered else "beside another dimension than time"
            return (f'#/dimensions/{i}: hitboard cannot group by "{name}" {why}: such '
                    "queries are counted from raw events, which group by "
                    f"{', '.join(COUNTED)} (and time); {name} goes with time alone, "
                    "without filters")
    return None


def answer_grid(db, q: StatsQuery, events_ttl_days: int) -> Answer:
    time, others = split(q.dimensions)
    at = q.dimensions.index(time) if time else None
    buckets = (time_buckets(q.start, q.end, q.granularity, q.tz) if time
               else [(None, q.start, q.end)])
    if by_counters(q.dimensions, bool(q.filters), q.metrics):
        rows, sources, notes = [], [], []
        for name, a, b in buckets:
            part = answer(db, replace(q, start=a, end=b, dimension=others[0],
                                      granularity=None, dimensions=()), events_ttl_days)
            rows += [(_placed(name, values, at), found) for values, found in part.rows]
            sources += [s for s in part.source.split(", ") if s not in sources]
            notes += part.notes
        return Answer(rows, ", ".join(sources), sorted(set(notes)))
    check_kept(db, q, events_ttl_days)
    by = tuple(COUNTED[d] for d in others)
    rows = []
    for name, a, b in buckets:
        rows += [(_placed(name, values, at), {m: found[m] for m in q.metrics})
                 for values, found in from_events(db, q, a, b, by)]
    return Answer(rows, "raw events")


def _placed(label: str | None, values: tuple, at: int | None) -> tuple:
    """A row's dimension values in the order asked, the bucket's label at ``at``."""
    values = tuple(values)
    return values if at is None else (*values[:at], label, *values[at:])
