"""Time series read from the pre-aggregated documents.

Every read is one indexed ``find`` on ``(metadata.site, metadata.page, metadata.date)``
with a projection of just the counters it needs. Counts are read at a *base* resolution
stored in UTC (minute, hour or day) and summed into buckets of the requested time zone:
a local day in Europe/Paris reads the hours of two UTC daily documents; in a zone whose
offset is not a whole hour (Asia/Kolkata) hours come from minutes. Buckets are whole
buckets of that zone (the first floored, the last ceiled), and count the hits of
``[start, end)`` only, to the minute: a bucket that ``start`` or ``end`` cuts holds its
part. ``humans`` counts people alone: each counter less its ``bots`` twin
(``schema.BOTS``), at every granularity; documents written before bots were counted
there have no twin, and their hits count as people (``attrs["unsplit"]`` says how many).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from .. import validation
from ..errors import InvalidRangeError
from ..validation import MAX_MINUTE_SPAN, WHOLE_SITE
from . import schema

GRANULARITIES = ("minute", "hour", "day")
_MINUTE_NS = 60 * 10**9
_STEP = {"minute": dt.timedelta(minutes=1), "hour": dt.timedelta(hours=1)}


def series(db, site: str, start: dt.datetime, end: dt.datetime, granularity: str,
           pages: Sequence[str] | None = None, tz="UTC", humans: bool = False
           ) -> pd.DataFrame:
    """Hits per bucket: a tz-aware index named ``time``, one integer column per page
    (``*`` when ``pages`` is empty: the whole site); people's alone if ``humans``."""
    if granularity not in GRANULARITIES:
        raise InvalidRangeError(
            f"unknown granularity {granularity!r}: use one of {', '.join(GRANULARITIES)}"
        )
    site = validation.site(site)
    page_list = normalise_pages(pages)
    zone = validation.timezone(tz)
    start, end = validation.time_range(start, end)
    if granularity == "minute" and end - start > MAX_MINUTE_SPAN:
        raise InvalidRangeError("minute granularity is limited to 400 days: choose hour or day")
    edges = bucket_edges(start, end, granularity, zone)
    counts = _range_counts(db, site, {"$in": page_list}, edges, start, end, humans)
    index = pd.DatetimeIndex(edges[:-1]).tz_convert(zone).rename("time")
    values = np.zeros((len(index), len(page_list)), dtype="int64")
    if len(counts):
        edge_ns = np.array([int(e.timestamp()) * 10**9 for e in edges], dtype="int64")
        slot = np.searchsorted(edge_ns, counts["ns"].to_numpy(), side="right") - 1
        column = counts["page"].map({page: i for i, page in enumerate(page_list)})
        np.add.at(values, (slot, column.to_numpy(dtype="int64")),
                  counts["hits"].to_numpy(dtype="int64"))
    frame = pd.DataFrame(values, index=index, columns=page_list)
    frame.columns.name = "page"
    frame.attrs["unsplit"] = counts.attrs.get("unsplit", 0)
    return frame


def minute_series(db, site, start, end, pages=None, tz="UTC") -> pd.DataFrame:
    return series(db, site, start, end, "minute", pages, tz)


def hourly_series(db, site, start, end, pages=None, tz="UTC") -> pd.DataFrame:
    return series(db, site, start, end, "hour", pages, tz)


def daily_series(db, site, start, end, pages=None, tz="UTC") -> pd.DataFrame:
    return series(db, site, start, end, "day", pages, tz)


def normalise_pages(pages: Iterable[str] | None) -> list[str]:
    cleaned = [validation.page(p) for p in pages or ()]
    return list(dict.fromkeys(cleaned)) or [WHOLE_SITE]


def bucket_edges(start: dt.datetime, end: dt.datetime, granularity: str, zone) -> list:
    """UTC instants bounding each local bucket; handles DST days of 23 and 25 hours."""
    first = _floor(start.astimezone(zone), granularity)
    edges = [first]
    while edges[-1] < end:
        edges.append(_next(edges[-1], granularity, zone))
    return [e.astimezone(dt.UTC) for e in edges]


def _floor(local: dt.datetime, granularity: str) -> dt.datetime:
    if granularity == "day":
        floored = local.replace(hour=0, minute=0, second=0, microsecond=0)
        return floored.astimezone(dt.UTC).astimezone(local.tzinfo)
    if granularity == "hour":
        utc = local.astimezone(dt.UTC)
        offset = local.utcoffset()
        local_wall = (utc + offset).replace(minute=0, second=0, microsecond=0)
        return (local_wall - offset).astimezone(local.tzinfo)
    return local.replace(second=0, microsecond=0)


def _next(edge: dt.datetime, granularity: str, zone) -> dt.datetime:
    if granularity == "day":
        wall = (edge.astimezone(zone).replace(tzinfo=None) + dt.timedelta(days=1))
        return wall.replace(tzinfo=zone).astimezone(dt.UTC).astimezone(zone)
    return (edge.astimezone(dt.UTC) + _STEP[granularity]).astimezone(zone)


def _range_counts(db, site: str, page_filter, edges: list[dt.datetime], start: dt.datetime,
                  end: dt.datetime, humans: bool = False) -> pd.DataFrame:
    """The counts of ``[start, end)``: whole buckets at their base resolution, and a first
    or last bucket that ``start`` or ``end`` cuts at the resolution the cut needs (a
    period ending at 11:28, compared with one ending today at 11:28, counts its last day
    to 11:28, not whole)."""
    start, end = _floor(start, "minute"), _ceil_minute(end)     # the counters' finest step
    lo = edges[1] if start > edges[0] else edges[0]
    hi = edges[-2] if end < edges[-1] else edges[-1]
    if lo >= hi:                       # one bucket, cut at both ends, or none whole
        return fetch_counts(db, site, page_filter, _base_resolution([start, end]), start, end,
                            humans)
    parts = [fetch_counts(db, site, page_filter, _base_resolution(edges), lo, hi, humans)]
    parts += [fetch_counts(db, site, page_filter, _base_resolution([a, b]), a, b, humans)
              for a, b in ((start, lo), (hi, end)) if a < b]
    if len(parts) == 1:
        return parts[0]
    frame = pd.concat(parts, ignore_index=True)
    frame.attrs["unsplit"] = sum(part.attrs["unsplit"] for part in parts)
    return frame


def _ceil_minute(t: dt.datetime) -> dt.datetime:
    floored = t.replace(second=0, microsecond=0)
    return floored if floored == t else floored + _STEP["minute"]


def _base_resolution(edges: list[dt.datetime]) -> str:
    if all(e.hour == 0 and e.minute == 0 for e in edges):
        return "day"
    if all(e.minute == 0 for e in edges):
        return "hour"
    return "minute"


def fetch_counts(db, site: str, page_filter, base: str, start: dt.datetime,
                 end: dt.datetime, humans: bool = False) -> pd.DataFrame:
    """Non-zero UTC counts in ``[start, end)`` at the base resolution, as a frame with
    columns ``ns`` (epoch nanoseconds of the unit's start), ``page`` and ``hits``
    (people's if ``humans``: ``attrs["unsplit"]``, hits of documents without bot counters,
    counted as people)."""
    if base == "day":
        projection = {"daily": 1}
        docs = _find(db, schema.MONTHLY, site, page_filter, schema.month_start(start),
                     end - dt.timedelta(microseconds=1), _with_bots(projection, humans, "monthly"))
        rows = _day_rows
    else:
        first_day, last_day = schema.day_start(start), schema.day_start(end - _STEP["minute"])
        if base == "hour":
            projection = {"hourly": 1}
        elif end - start >= dt.timedelta(days=1):
            projection = {"minute": 1}
        else:
            hours = {(start + dt.timedelta(hours=i)).hour
                     for i in range(int((end - start) / dt.timedelta(hours=1)) + 2)}
            projection = {f"minute.{h}": 1 for h in sorted(hours)}
        docs = _find(db, schema.DAILY, site, page_filter, first_day, last_day,
                     _with_bots(projection, humans, "daily"))
        rows = _hour_rows if base == "hour" else _minute_rows
    lo, hi = int(start.timestamp()) * 10**9, int(end.timestamp()) * 10**9
    frame = _within(pd.DataFrame(rows(docs), columns=["ns", "page", "hits"]), lo, hi)
    frame.attrs["unsplit"] = 0
    if humans:
        split = [doc for doc in docs if schema.BOTS in doc]
        bots = _within(pd.DataFrame(rows(doc[schema.BOTS] | {"metadata": doc["metadata"]}
                                         for doc in split),
                                    columns=["ns", "page", "hits"]), lo, hi)
        unsplit = _within(pd.DataFrame(rows(doc for doc in docs if schema.BOTS not in doc),
                                       columns=["ns", "page", "hits"]), lo, hi)
        frame = _less(frame, bots)
        frame.attrs["unsplit"] = int(unsplit["hits"].sum())
    return frame


def part_counts(db, site: str, page_filter, parts) -> pd.DataFrame:
    """Non-zero UTC counts of hour and minute parts, ``(base, start, end)`` as
    ``fetch_counts`` takes them, with its columns: the daily documents of each day the
    parts touch read once, for all of them (a range ending now reads today's for its
    hours and again for its last minutes otherwise: a site with hundreds of pages
    decoded each of today's documents twice)."""
    days: dict[dt.datetime, list[tuple[str, dt.datetime, dt.datetime]]] = {}
    for base, start, end in parts:
        day = schema.day_start(start)
        while day < end:
            days.setdefault(day, []).append((base, start, end))
            day += dt.timedelta(days=1)
    frames = [pd.DataFrame(columns=["ns", "page", "hits"])]
    for day, on_day in sorted(days.items()):
        projection: dict[str, int] = {}
        for base, start, end in on_day:
            if base == "hour":
                projection["hourly"] = 1
                continue
            hour = max(start, day).replace(minute=0, second=0, microsecond=0)
            while hour < min(end, day + dt.timedelta(days=1)):
                projection[f"minute.{hour.hour}"] = 1
                hour += dt.timedelta(hours=1)
        docs = _find(db, schema.DAILY, site, page_filter, day, day, projection)
        for base, start, end in on_day:
            rows = _hour_rows if base == "hour" else _minute_rows
            frames.append(_within(pd.DataFrame(rows(docs), columns=["ns", "page", "hits"]),
                                  int(start.timestamp()) * 10**9, int(end.timestamp()) * 10**9))
    return pd.concat(frames, ignore_index=True)


def _within(frame: pd.DataFrame, lo: int, hi: int) -> pd.DataFrame:
    return frame[(frame["ns"] >= lo) & (frame["ns"] < hi)]


def _less(hits: pd.DataFrame, bots: pd.DataFrame) -> pd.DataFrame:
    """``hits`` less ``bots`` unit by unit (a bot hit is always among the hits)."""
    if not len(bots):
        return hits
    merged = hits.merge(bots, on=["ns", "page"], how="left", suffixes=("", "_bots"))
    merged["hits"] -= merged["hits_bots"].fillna(0).astype("int64")
    return merged.loc[merged["hits"] > 0, ["ns", "page", "hits"]].reset_index(drop=True)


def _with_bots(projection: dict, humans: bool, level: str) -> dict:
    """``projection`` and, for people, its twin under ``schema.BOTS`` plus the counter
    every flush writes there (its presence says the document counts bots apart)."""
    if not humans:
        return projection
    twin = {f"{schema.BOTS}.{path}": 1 for path in projection}
    return {**projection, **twin, f"{schema.BOTS}.{level}": 1}


def _find(db, collection, site, page_filter, first, last, projection) -> list[dict]:
    query = {"metadata.site": site, "metadata.page": page_filter,
             "metadata.date": {"$gte": first, "$lte": last}}
    return list(db[collection].find(query, {"metadata": 1, **projection}))


def _epoch_ns(date: dt.datetime) -> int:
    return int(date.replace(tzinfo=dt.UTC).timestamp()) * 10**9


def _minute_rows(docs):
    for doc in docs:
        base, page = _epoch_ns(doc["metadata"]["date"]), doc["metadata"]["page"]
        for hour, minutes in (doc.get("minute") or {}).items():
            hour_ns = base + int(hour) * 60 * _MINUTE_NS
            for minute, hits in minutes.items():
                if hits:
                    yield hour_ns + int(minute) * _MINUTE_NS, page, hits


def _hour_rows(docs):
    for doc in docs:
        base, page = _epoch_ns(doc["metadata"]["date"]), doc["metadata"]["page"]
        for hour, hits in (doc.get("hourly") or {}).items():
            if hits:
                yield base + int(hour) * 60 * _MINUTE_NS, page, hits


def _day_rows(docs):
    for doc in docs:
        base, page = _epoch_ns(doc["metadata"]["date"]), doc["metadata"]["page"]
        for day, hits in (doc.get("daily") or {}).items():
            if hits:
                yield base + (int(day) - 1) * 1440 * _MINUTE_NS, page, hits
