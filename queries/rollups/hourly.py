"""The hourly level counted from the raw events' columns, not event by event.

A bucket of events already holds its columns as arrays (``events.buckets``): its times,
statuses and sizes packed, its paths as distinct values and a code per event. So a
touched piece's events become one frame of numbers (hour, page id, status class, hits,
bytes), Python naming each bucket's distinct paths once; Polars sums it per hour and
page; Python then runs once per output row, to sort a bucket's pages and hand them to
``documents``. Events a retention deleted count through the totals it kept
(``events.expired``), exactly once as ``expired.hourly_totals`` counts them: a bucket
whose totals appear while it is read is counted from its totals alone.
"""

from __future__ import annotations

import datetime as dt
from array import array

import numpy as np
import polars as pl

from .. import validation
from ..events import buckets, expired
from ..events import reads as event_reads
from ..stats import schema
from . import merged
from .documents import BACKFILLED, CLASSES

_COLUMNS = ("path", "status", "bytes")
_OTHER = len(CLASSES) - 1
_SUMS = ("hits", "bytes", *(f"c{i}" for i in range(len(CLASSES))))


class _Pages:
    """Page ids: each distinct path named once per bucket, numbered once per piece."""

    def __init__(self):
        self.ids: dict = {}
        self.names: list = []

    def codes(self, values) -> np.ndarray:
        ids = self.ids
        out = np.empty(len(values), dtype=np.int64)
        for i, value in enumerate(values):
            found = ids.get(value)
            if found is None:
                found = ids[value] = len(self.names)
                self.names.append(value)
            out[i] = found
        return out


def hour_rows(db, site: str, hours: set[dt.datetime]) -> tuple[dict, pl.DataFrame | None]:
    """Per touched hour with traffic, its rows ``[page, hits, bytes, 2xx, 3xx, 4xx, 5xx,
    other]`` sorted by page and their totals (None: not summed): its events (expired
    ones included) and its backfilled history (``documents.BACKFILLED``); and all the rows
    as one frame (see ``_by_hour``)."""
    pages = _Pages()
    spans = event_reads.runs(sorted(hours))
    skip: set = set()
    while True:
        frames, seen = _stored(db, site, spans, skip, pages)
        kept = [doc for lo, hi in spans for doc in db[expired.COLLECTION].find(
            {"site": site, "hour": {"$gte": lo, "$lt": hi}})]
        moved = {doc["_id"] for doc in kept}
        if not (moved - skip) & seen:
            break
        skip = moved                # expired while we read: count them from their totals
    frames += [_kept(doc, pages) for doc in kept]
    counted = [_counted(frames)] if frames else []
    counted += _backfilled(db, site, hours, pages)
    if not counted:
        return {}, None
    summed = (pl.concat(counted).group_by("hour", "page")
              .agg(pl.col(name).sum() for name in _SUMS))
    return _by_hour(summed.rename(dict(zip(_SUMS, merged.COUNTS, strict=True))),
                    pages.names)


def _by_hour(summed: pl.DataFrame, names: list) -> tuple[dict, pl.DataFrame | None]:
    """The summed rows cut per hour, each hour's sorted by page name (in Polars; in
    Python if a name is none that Polars holds), with their totals (or None); and the
    rows as a frame (``start`` ms, ``page``, counts), None when cut in Python."""
    try:
        named = summed.with_columns(page=pl.Series(names, dtype=pl.Utf8).gather(
            summed["page"]))
    except (pl.exceptions.PolarsError, TypeError, ValueError):
        out: dict = {}
        for hour, page, *counts in summed.rows():
            out.setdefault(hour, []).append([names[page], *counts])
        return {schema.from_epoch_ms(hour * buckets.HOUR_MS): (sorted(rows), None)
                for hour, rows in out.items()}, None
    hours = named["hour"].unique().sort().to_list()
    starts = [schema.from_epoch_ms(hour * buckets.HOUR_MS) for hour in hours]
    indexed = named.with_columns(hour=pl.col("hour").rank("dense").cast(pl.Int64) - 1)
    frame = named.select(pl.col("hour") * buckets.HOUR_MS, pl.exclude("hour")).rename(
        {"hour": "start"})
    return merged.cut(indexed.sort("hour", "page"), "hour", starts), frame


def _stored(db, site: str, spans: list[tuple], skip: set, pages: _Pages
            ) -> tuple[list[dict], set]:
    """The events of the buckets still stored in ``spans`` but ``skip`` as arrays, and
    the buckets' ids (a bucket lies within one UTC hour: inside a span, or outside)."""
    frames, seen = [], set()
    for lo, hi in spans:
        for bucket in buckets.overlapping(db, site, lo, hi, _COLUMNS):
            if bucket["_id"] in skip or not lo <= bucket["start"] < hi:
                continue
            seen.add(bucket["_id"])
            n = bucket["n"]
            values, codes = buckets.coded(bucket, "path", n)
            ids = pages.codes(values)
            frames.append({
                "hour": np.frombuffer(bucket[buckets.TIME], dtype="<i8") // buckets.HOUR_MS,
                "page": ids if codes is None else ids[_indexes(codes)],
                "status": _numbers(bucket, "status", n, -1),
                "bytes": _numbers(bucket, "bytes", n, 0),
                "hits": None})
    return frames, seen


def _indexes(codes) -> np.ndarray:
    """A coded column's codes (an ``array('H')``, or a list) as a numpy array."""
    if isinstance(codes, array):
        return np.frombuffer(codes, dtype=np.uint16)
    return np.asarray(codes, dtype=np.int64)


def _numbers(bucket: dict, name: str, n: int, missing: int) -> np.ndarray:
    """A number column as int64s (``missing`` for an event without a number)."""
    stored = bucket.get(name)
    if isinstance(stored, dict) and "p" in stored:
        return np.frombuffer(stored["p"], dtype=np.dtype(stored["c"]).newbyteorder("<")
                             ).astype(np.int64)
    values, codes = buckets.coded(bucket, name, n)
    if codes is not None:
        values = [values[i] for i in codes]
    return np.array([v if type(v) is int else missing for v in values], dtype=np.int64)


def _kept(doc: dict, pages: _Pages) -> dict:
    """The totals a retention kept of one expired bucket, as arrays."""
    n = len(doc["path"])
    hour = schema.epoch_ms(doc["hour"]) // buckets.HOUR_MS
    return {"hour": np.full(n, hour, dtype=np.int64), "page": pages.codes(doc["path"]),
            "status": np.array([s if type(s) is int else -1 for s in doc["status"]],
                               dtype=np.int64),
            "bytes": np.array([b or 0 for b in doc["bytes"]], dtype=np.int64),
            "hits": np.array(doc["hits"], dtype=np.int64)}


def _counted(frames: list[dict]) -> pl.DataFrame:
    """Events (and kept totals) as rows of hour, page, hits, bytes and hits per class."""
    hits = np.concatenate([f["hits"] if f["hits"] is not None
                           else np.ones(len(f["hour"]), dtype=np.int64) for f in frames])
    status = np.concatenate([f["status"] for f in frames])
    cls = np.where((status >= 200) & (status < 600), status // 100 - 2, _OTHER)
    frame = pl.DataFrame({"hour": np.concatenate([f["hour"] for f in frames]),
                          "page": np.concatenate([f["page"] for f in frames]),
                          "hits": hits,
                          "bytes": np.concatenate([f["bytes"] for f in frames])})
    return frame.with_columns(
        pl.Series(f"c{i}", np.where(cls == i, hits, 0)) for i in range(len(CLASSES)))


def _backfilled(db, site: str, hours: set[dt.datetime], pages: _Pages) -> list[pl.DataFrame]:
    """The backfilled history of ``hours`` (no events stand behind it) as counted rows."""
    days = sorted({h.replace(hour=0) for h in hours})
    rows = []
    for doc in db[BACKFILLED].find({"site": site, "day": {"$in": days}}):
        day = validation.timestamp(doc["day"])
        for hour, part in (doc.get("hours") or {}).items():
            start = day + dt.timedelta(hours=int(hour))
            if start not in hours or not part.get("hits"):
                continue
            status = part.get("status", {})
            rows.append((schema.epoch_ms(start) // buckets.HOUR_MS,
                         int(pages.codes([doc["page"]])[0]), part["hits"],
                         part.get("bytes", 0), *(status.get(cls, 0) for cls in CLASSES)))
    if not rows:
        return []
    return [pl.DataFrame(rows, schema=[(name, pl.Int64) for name in ("hour", "page", *_SUMS)],
                         orient="row")]
