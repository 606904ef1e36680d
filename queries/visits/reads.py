"""Visits read back: a metric per bucket of any zone, a range's totals, entry and exit
pages. Visits count in the quarter hour of their first pageview, so every bucket of a
zone a whole number of quarter hours from UTC (all zones in use) holds exactly its own;
a range cut inside a quarter hour counts that quarter whole and says it is not exact."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
import pandas as pd

from .. import validation
from ..stats import schema
from ..stats.series import bucket_edges
from . import store
from .sessions import QUARTER_MS

METRICS = ("visits", "pageviews", "bounce_rate", "visit_duration", "views_per_visit")
GRANULARITIES = ("hour", "day", "week", "month", "year")
SUMS = ("visits", "bounces", "duration", "views", "pageviews")   # what a quarter stores
PAGE_KINDS = ("entry", "exit")


class Totals(NamedTuple):
    visits: int
    bounces: int
    duration_ms: int
    views: int            # pageviews of those visits
    pageviews: int        # pageviews made in the range
    exact: bool

    @property
    def bounce_rate(self) -> float | None:
        """Percent of visits with one pageview (None without visits)."""
        return 100 * self.bounces / self.visits if self.visits else None

    @property
    def visit_duration(self) -> float | None:
        """Mean seconds from a visit's first pageview to its last."""
        return self.duration_ms / 1000 / self.visits if self.visits else None

    @property
    def views_per_visit(self) -> float | None:
        return self.views / self.visits if self.visits else None


def quarters(db, site: str, start: dt.datetime, end: dt.datetime) -> pd.DataFrame:
    """The site's stored quarters of [start, end) (a quarter counts if it starts
    inside): ``time`` (ms since the epoch) and ``SUMS``, summed where events and
    backfilled history share a quarter."""
    lo, hi = schema.epoch_ms(start), schema.epoch_ms(end)     # quarters starting inside
    frame = pd.DataFrame(list(quarter_rows(db, site, start, end, "q")),
                         columns=["time", *SUMS], dtype="int64")
    frame = frame[(frame["time"] >= lo) & (frame["time"] < hi)]
    return frame.groupby("time", as_index=False).sum()


def page_rows(db, site: str, start: dt.datetime, end: dt.datetime, kind: str,
              page: str | None = None) -> pd.DataFrame:
    """``time`` (quarter, ms), ``page`` and the counts of ``kind`` (``entry``, ``exit``:
    visits, bounces, duration; ``views``: pageviews) of [start, end)."""
    lo, hi = schema.epoch_ms(start), schema.epoch_ms(end)     # quarters starting inside
    rows = [row for row in quarter_rows(db, site, start, end, kind)
            if page is None or row[1] == page]
    frame = pd.DataFrame(rows, columns=["time", "page", *_counts(kind)])
    return frame[(frame["time"] >= lo) & (frame["time"] < hi)]


def quarter_rows(db, site: str, start: dt.datetime, end: dt.datetime, kind: str
                 ) -> Iterator[tuple]:
    """``(quarter start ms, *row)`` of every row of ``kind`` in the day documents holding
    [start, end), both parts (the caller keeps the quarters it wants)."""
    for doc in store.days(db, validation.site(site), start, end, store.kind_fields(kind)):
        for hour, found in store.hours_of(doc, kind):
            for q, *rest in found:
                yield (hour + q * QUARTER_MS, *rest)


def page_sums(db, site: str, start: dt.datetime, end: dt.datetime, kind: str
              ) -> pd.DataFrame:
    """Per page, the counts of ``kind`` over [start, end): the sums of its whole UTC
    months and days (a row per page and month or day), the quarters of the days it
    cuts."""
    site = validation.site(site)
    rows, edges = summed_rows(db, site, start, end, f"sums.{kind}")
    parts = [pd.DataFrame([row for doc in rows for row in (doc.get("sums") or {}).get(kind, ())],
                          columns=["page", *_counts(kind)])]
    parts += [page_rows(db, site, lo, hi, kind).drop(columns="time")
              for lo, hi in edges if lo < hi]
    return pd.concat(parts).groupby("page")[_counts(kind)].sum()


def summed_rows(db, site: str, start: dt.datetime, end: dt.datetime, field: str
                ) -> tuple[list[dict], list[tuple[dt.datetime, dt.datetime]]]:
    """The month and day documents (``field`` of their sums only) of the whole UTC
    months and days in [start, end), and the cut parts left at either end, whose
    quarters the caller reads."""
    first_day, last_day = _day_from(start), schema.day_start(end)
    if first_day >= last_day:
        return [], [(start, end)]
    docs: list[dict] = []
    first_month, last_month = _month_from(first_day), schema.month_start(last_day)
    spans = [(first_day, last_day)]
    if first_month < last_month:
        docs += store.months(db, site, first_month, last_month, field)
        spans = [(first_day, first_month), (last_month, last_day)]
    docs += [doc for lo, hi in spans if lo < hi for doc in store.days(db, site, lo, hi, (field,))]
    return docs, [(start, first_day), (last_day, end)]


def _day_from(moment: dt.datetime) -> dt.datetime:
    """The first UTC midnight at or after ``moment``."""
    start = schema.day_start(moment)
    return start if start == moment else start + dt.timedelta(days=1)


def _month_from(moment: dt.datetime) -> dt.datetime:
    """The first start of a UTC month at or after ``moment``."""
    start = schema.month_start(moment)
    return start if start == moment else schema.month_start(start + dt.timedelta(days=32))


def _counts(kind: str) -> list[str]:
    return ["pageviews"] if kind == "views" else ["visits", "bounces", "duration"]


def totals(db, site: str, start: dt.datetime, end: dt.datetime,
           now: dt.datetime | None = None) -> Totals:
    """The visits starting in [start, end) and the pageviews made in it."""
    start, end = validation.time_range(start, end)
    sums = quarters(db, site, start, end)[list(SUMS)].sum()
    return Totals(*(int(sums[name]) for name in SUMS), exact=is_exact(start, end, now))


def series(db, site: str, start: dt.datetime, end: dt.datetime, granularity: str,
           tz: str = "UTC", page: str | None = None) -> pd.DataFrame:
    """Per bucket of ``granularity`` in zone ``tz`` (index: local starts): ``SUMS`` and
    the metrics of ``METRICS``. With ``page``: its pageviews, and the visits entering
    there (bounces and duration theirs; ``views`` is then not known: NaN)."""
    start, end = validation.time_range(start, end)
    zone = validation.timezone(tz)
    edges = _edges(start, end, granularity, zone)
    if page is None:
        found = quarters(db, site, start, end)
    else:
        found = pd.concat([page_rows(db, site, start, end, kind, page).drop(columns="page")
                           for kind in ("entry", "views")])
    found = found.reindex(columns=["time", *SUMS], fill_value=0)
    edges_ms = np.array([schema.epoch_ms(e) for e in edges], dtype=np.int64)
    index = pd.DatetimeIndex([e.astimezone(zone) for e in edges[:-1]], name="time")
    frame = pd.DataFrame(0.0, index=index, columns=list(SUMS))
    if len(found):
        bucket = np.searchsorted(edges_ms, found["time"].to_numpy(), side="right") - 1
        summed = found[list(SUMS)].groupby(bucket).sum()
        frame.iloc[summed.index.to_numpy()] = summed.to_numpy(dtype="float64")
    if page is not None:
        frame["views"] = np.nan
    with_metrics(frame)
    frame.attrs["exact"] = is_exact(start, end)
    return frame


def with_metrics(frame: pd.DataFrame) -> pd.DataFrame:
    """Add bounce rate (percent), visit duration (mean seconds) and views per visit to
    a frame of ``SUMS`` (NaN where there is no visit)."""
    visits = frame["visits"].where(frame["visits"] > 0)
    frame["bounce_rate"] = 100 * frame["bounces"] / visits
    frame["visit_duration"] = frame["duration"] / 1000 / visits
    frame["views_per_visit"] = frame["views"] / visits
    return frame


def pages(db, site: str, start: dt.datetime, end: dt.datetime, kind: str,
          n: int | None = None) -> pd.DataFrame:
    """Entry (``kind`` ``entry``) or exit pages of the visits of [start, end), most
    visits first: ``value``, ``visits``, ``bounce_rate``, ``visit_duration``."""
    if kind not in PAGE_KINDS:
        raise validation.InvalidRangeError(f"pages of visits are {' or '.join(PAGE_KINDS)}")
    start, end = validation.time_range(start, end)
    summed = with_metrics(page_sums(db, site, start, end, kind).assign(views=np.nan))
    summed = summed.reset_index().rename(columns={"page": "value"})
    summed = summed.sort_values(["visits", "value"], ascending=[False, True])
    frame = summed[["value", "visits", "bounce_rate", "visit_duration"]].reset_index(drop=True)
    frame.attrs["exact"] = is_exact(start, end)
    return frame if n is None else frame.head(n)


def is_exact(start: dt.datetime, end: dt.datetime, now: dt.datetime | None = None) -> bool:
    """Whether [start, end) is whole quarter hours (its end may also lie ahead of
    ``now``: no visit has started there yet)."""
    now = now or dt.datetime.now(dt.UTC)
    on_quarter = [schema.epoch_ms(t) % QUARTER_MS == 0 for t in (start, end)]
    return on_quarter[0] and (on_quarter[1] or end >= now)


def _edges(start: dt.datetime, end: dt.datetime, granularity: str, zone) -> list:
    """UTC instants bounding each local bucket of ``granularity`` over [start, end)."""
    if granularity not in GRANULARITIES:
        raise validation.InvalidRangeError(
            f"visits come per {', '.join(GRANULARITIES)}, not {granularity!r}")
    if granularity in ("hour", "day"):
        return bucket_edges(start, end, granularity, zone)
    local = start.astimezone(zone).date()
    if granularity == "week":
        first = local - dt.timedelta(days=local.weekday())
    elif granularity == "month":
        first = local.replace(day=1)
    else:
        first = local.replace(month=1, day=1)
    edges = [first]
    while _utc(edges[-1], zone) < end:
        edges.append(_step(edges[-1], granularity))
    return [_utc(day, zone) for day in edges]


def _step(day: dt.date, granularity: str) -> dt.date:
    if granularity == "week":
        return day + dt.timedelta(days=7)
    if granularity == "month":
        return (day.replace(day=1) + dt.timedelta(days=32)).replace(day=1)
    return day.replace(year=day.year + 1, month=1, day=1)


def _utc(day: dt.date, zone) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, tzinfo=zone).astimezone(dt.UTC)
