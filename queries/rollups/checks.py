"""Is what the dashboard shows right? Rollups against the pre-aggregated statistics, level
by level, and the pre-aggregated documents' own invariants.

Each rollup level is built from the level below (hours from events, days from hours,
weeks and months from days, years from months), so each is compared with the statistics
built the same way: the hours of ``stats.daily`` (``hourly.H``), summed into days, weeks,
months and years. A count planted in one hour then shows at every level, as it would in
the rollups. Whether ``daily``, ``hourly``, ``minute`` and the monthly ``daily.D`` agree
with one another is the other half: :func:`invariants` names every document breaking them.

Only buckets the rollups are meant to cover are compared: those wholly before the last
run's settled watermark (a bucket in progress is behind by design, up to one run). The
result says which buckets it compared.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from .. import validation
from ..stats import schema
from ..stats.series import normalise_pages
from .build import EPOCH, SETTLE, checkpoint, floor, next_start
from .reads import level_name, level_of, rollup_series, rollup_span

MAX_BREACHES = 50


@dataclass
class Consistency:
    """Rollup hits against the statistics' hours, per bucket and page."""

    level: str
    checked: int                    # buckets × pages compared
    differing: pd.DataFrame         # index time; columns page, rollup, stats
    first: dt.datetime | None       # first and last bucket compared
    last: dt.datetime | None
    covered_until: dt.datetime | None   # rollups are complete before this instant
    in_progress: int = 0            # buckets of the range not compared (not complete yet)

    @property
    def ok(self) -> bool:
        return self.differing.empty


def covered_until(db) -> dt.datetime | None:
    """The hour before which every event has been rolled up by the last run (None: the
    rollups never ran)."""
    state = checkpoint(db)
    if not state["last_run"] or state["watermark"] <= EPOCH:
        return None
    return floor("hourly", validation.timestamp(state["watermark"]) - SETTLE)


def consistency(db, site: str, level: str, start: dt.datetime | None = None,
                end: dt.datetime | None = None,
                pages: Sequence[str] | None = None) -> Consistency:
    """Compares the rollup buckets of ``[start, end)`` (default: every bucket the site's
    rollups hold) that the rollups cover with the same buckets summed from the
    statistics' hours, for ``pages`` (default ``*``)."""
    level, site = level_of(level), validation.site(site)
    page_list = normalise_pages(pages)
    until = covered_until(db)
    if start is None or end is None:
        span = rollup_span(db, site, level)
        if span is None:
            return Consistency(level, 0, _no_diff(), None, None, until)
        start, end = span[0], next_start(level, span[1])
    starts = [floor(level, start)]
    while (following := next_start(level, starts[-1])) < end:
        starts.append(following)
    compared = [s for s in starts if until is not None and next_start(level, s) <= until]
    if not compared:
        return Consistency(level, 0, _no_diff(), None, None, until, len(starts))
    lo, hi = compared[0], next_start(level, compared[-1])
    rolled = rollup_series(db, site, lo, hi, level_name(level), page_list)
    stats = _stats_buckets(db, site, level, page_list, lo, hi)
    rows = []
    for page in page_list:
        for bucket in compared:
            stamp = pd.Timestamp(bucket)
            mine, theirs = int(rolled.at[stamp, page]), stats.get((page, bucket), 0)
            if mine != theirs:
                rows.append({"time": stamp, "page": page, "rollup": mine, "stats": theirs})
    differing = (pd.DataFrame(rows).set_index("time") if rows else _no_diff())
    return Consistency(level, len(compared) * len(page_list), differing, compared[0],
                       compared[-1], until, len(starts) - len(compared))


def _stats_buckets(db, site, level, pages, lo, hi) -> dict[tuple[str, dt.datetime], int]:
    """(page, bucket start) → hits summed from the ``hourly`` counters of the daily
    documents: hours, then days, then the level (months and years from days)."""
    out: dict[tuple[str, dt.datetime], int] = defaultdict(int)
    query = {"metadata.site": site, "metadata.page": {"$in": list(pages)},
             "metadata.date": {"$gte": schema.day_start(lo), "$lt": hi}}
    for doc in db[schema.DAILY].find(query, {"metadata": 1, "hourly": 1}):
        day = validation.timestamp(doc["metadata"]["date"])
        page = doc["metadata"]["page"]
        for hour, hits in (doc.get("hourly") or {}).items():
            when = day + dt.timedelta(hours=int(hour))
            if lo <= when < hi:
                out[(page, floor(level, when))] += int(hits)
    return out


def _no_diff() -> pd.DataFrame:
    return pd.DataFrame({"page": pd.Series([], dtype="object"),
                         "rollup": pd.Series([], dtype="int64"),
                         "stats": pd.Series([], dtype="int64")},
                        index=pd.DatetimeIndex([], tz="UTC", name="time"))


@dataclass(frozen=True)
class Breach:
    """One pre-aggregated document whose counters disagree with one another."""

    collection: str
    id: str
    problem: str


def invariants(db, site: str, start: dt.datetime, end: dt.datetime,
               pages: Sequence[str] | None = None) -> list[Breach]:
    """Checks the daily documents of ``[start, end)`` (``daily`` = Σ ``hourly`` = Σ
    ``minute``, and each hour = Σ its minutes) and their months (``monthly`` = Σ
    ``daily.D``, and ``daily.D`` = that day's ``daily``), for ``pages`` (default ``*``).
    Returns the breaking documents (at most ``MAX_BREACHES``)."""
    site, page_list = validation.site(site), normalise_pages(pages)
    start, end = validation.time_range(start, end)
    lo, hi = schema.day_start(start), end
    breaches: list[Breach] = []
    day_totals: dict[tuple[str, dt.datetime], int] = {}
    query = {"metadata.site": site, "metadata.page": {"$in": page_list},
             "metadata.date": {"$gte": lo, "$lt": hi}}
    for doc in db[schema.DAILY].find(query, {"metadata": 1, "daily": 1, "hourly": 1,
                                             "minute": 1}):
        day_totals[(doc["metadata"]["page"], validation.timestamp(doc["metadata"]["date"]))] = \
            int(doc.get("daily", 0))
        problem = _daily_problem(doc)
        if problem:
            breaches.append(Breach(schema.DAILY, doc["_id"], problem))
    months = {schema.month_start(day) for _, day in day_totals} or {schema.month_start(lo)}
    query = {"metadata.site": site, "metadata.page": {"$in": page_list},
             "metadata.date": {"$in": sorted(months)}}
    for doc in db[schema.MONTHLY].find(query, {"metadata": 1, "monthly": 1, "daily": 1}):
        problem = _monthly_problem(doc, day_totals, lo, hi)
        if problem:
            breaches.append(Breach(schema.MONTHLY, doc["_id"], problem))
    return breaches[:MAX_BREACHES]


def _daily_problem(doc: dict) -> str:
    daily = int(doc.get("daily", 0))
    hourly = {int(h): int(n) for h, n in (doc.get("hourly") or {}).items()}
    minutes = {int(h): sum(int(n) for n in (m or {}).values())
               for h, m in (doc.get("minute") or {}).items()}
    if daily == sum(hourly.values()) == sum(minutes.values()) and all(
            hourly.get(h, 0) == minutes.get(h, 0) for h in set(hourly) | set(minutes)):
        return ""
    hours = [f"hour {h}: {hourly.get(h, 0):,} vs {minutes.get(h, 0):,} in its minutes"
             for h in sorted(set(hourly) | set(minutes)) if hourly.get(h, 0) != minutes.get(h, 0)]
    return (f"daily {daily:,}, Σ hourly {sum(hourly.values()):,}, Σ minutes "
            f"{sum(minutes.values()):,}" + (f" ({'; '.join(hours[:3])})" if hours else ""))


def _monthly_problem(doc: dict, day_totals: dict, lo: dt.datetime, hi: dt.datetime) -> str:
    month = validation.timestamp(doc["metadata"]["date"])
    page = doc["metadata"]["page"]
    days = {int(d): int(n) for d, n in (doc.get("daily") or {}).items()}
    problems = []
    if int(doc.get("monthly", 0)) != sum(days.values()):
        problems.append(f"monthly {int(doc.get('monthly', 0)):,}, Σ daily "
                        f"{sum(days.values()):,}")
    day = month
    while day.month == month.month:
        if lo <= day < hi and days.get(day.day, 0) != day_totals.get((page, day), 0):
            problems.append(f"daily.{day.day} {days.get(day.day, 0):,} but the day's "
                            f"document says {day_totals.get((page, day), 0):,}")
        day += dt.timedelta(days=1)
    return "; ".join(problems[:4])
