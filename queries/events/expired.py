"""What expired events amounted to, so the rollups of their hour stay whole.

The hourly rollups recompute a touched hour from all of its events; once a retention has
deleted some of them, a late event of that hour (a second server's log, ingested weeks
later) would make the hour read as that event alone. So :func:`expire` first keeps each
bucket's totals per page and status (``{_id: the bucket's, site, hour, stream?, first?,
path: [...], status: [...], hits: [...], bytes: [...]}``), then deletes the bucket, and
:func:`hourly_totals` adds the totals kept to the events still stored.

Exactly once, whatever the timing: a bucket and its totals never count together. A
reader counts the buckets it finds, then reads the totals kept: a bucket deleted before
it looked has its totals kept already (they are written first), and a bucket it counted
whose totals appeared meanwhile (a run expiring it) is counted again without it. A run
killed between the two writes leaves a bucket beside its totals: readers leave the
bucket out, and the next run deletes it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

from pymongo import ASCENDING, ReplaceOne

from ..stats import schema
from . import buckets

COLLECTION = "events.expired"
INDEXES = {"site_hour": [("site", ASCENDING), ("hour", ASCENDING)],
           "stream_first": [("stream", ASCENDING), ("first", ASCENDING)]}
BATCH = 500        # buckets kept, then deleted, at a time
_COLUMNS = ("path", "status", "bytes")
Totals = dict[tuple[int, str, object], list[int]]    # (hour number, path, status) -> [hits, bytes]


def expire(db, old: dict) -> int:
    """Delete the buckets matching ``old``, their totals kept first; returns how many
    events left."""
    leaving, batch = 0, []
    for bucket in db[schema.EVENTS].find(old, _projection(extra=("stream", "first"))):
        batch.append(bucket)
        if len(batch) == BATCH:
            leaving += _expire(db, batch)
            batch = []
    return leaving + (_expire(db, batch) if batch else 0)


def _expire(db, batch: list[dict]) -> int:
    db[COLLECTION].bulk_write([ReplaceOne({"_id": b["_id"]}, _kept(b), upsert=True)
                               for b in batch], ordered=False)
    db[schema.EVENTS].delete_many({"_id": {"$in": [b["_id"] for b in batch]}})
    return sum(b["n"] for b in batch)


def _kept(bucket: dict) -> dict:
    totals: Totals = {}
    _add_bucket(totals, bucket)
    doc = {"site": bucket["site"], "hour": _hour_of(bucket["start"]),
           "path": [], "status": [], "hits": [], "bytes": []}
    for (_, path, status), (hits, size) in totals.items():
        for name, value in zip(("path", "status", "hits", "bytes"), (path, status, hits, size),
                               strict=True):
            doc[name].append(value)
    for name in ("stream", "first"):
        if name in bucket:
            doc[name] = bucket[name]
    return doc


def forget(db, stream: str, offset: int) -> None:
    """Drop the totals kept of the pass ``stream`` from byte ``offset`` on (its lines are
    read again): before the buckets themselves, so none is left to count twice."""
    db[COLLECTION].delete_many({"stream": stream, "first": {"$gte": offset}})


def hourly_totals(db, site: str, spans: list[tuple[dt.datetime, dt.datetime]],
                  ) -> Iterator[tuple[dt.datetime, str, object, int, int]]:
    """``(hour, path, status, hits, bytes)`` over the site's events of ``spans`` (whole
    UTC hours, ``[start, end)``), those expired included (see the module doc)."""
    skip: set = set()
    while True:
        totals, seen = _stored(db, site, spans, skip)
        kept = [doc for lo, hi in spans for doc in db[COLLECTION].find(
            {"site": site, "hour": {"$gte": lo, "$lt": hi}})]
        moved = {doc["_id"] for doc in kept}
        if not (moved - skip) & seen:
            break
        skip = moved                # expired while we read: count them from their totals
    for doc in kept:
        hour = schema.epoch_ms(doc["hour"]) // buckets.HOUR_MS
        for path, status, hits, size in zip(doc["path"], doc["status"], doc["hits"],
                                            doc["bytes"], strict=True):
            _add(totals, (hour, path, status), hits, size)
    for (hour, path, status), (hits, size) in totals.items():
        yield schema.from_epoch_ms(hour * buckets.HOUR_MS), path, status, hits, size


def _stored(db, site: str, spans: list[tuple], skip: set) -> tuple[Totals, set]:
    """The totals of the buckets still stored in ``spans`` but ``skip``, and their ids.
    A bucket lies within one UTC hour: inside a span of whole hours, or outside it."""
    totals: Totals = {}
    seen = set()
    for lo, hi in spans:
        for bucket in buckets.overlapping(db, site, lo, hi, _COLUMNS):
            if bucket["_id"] in skip or not lo <= bucket["start"] < hi:
                continue
            seen.add(bucket["_id"])
            _add_bucket(totals, bucket)
    return totals, seen


def _add_bucket(totals: Totals, bucket: dict) -> None:
    n, times = bucket["n"], buckets.times(bucket)
    for t, path, status, size in zip(times, buckets.column(bucket, "path", n),
                                     buckets.column(bucket, "status", n),
                                     buckets.column(bucket, "bytes", n), strict=True):
        _add(totals, (t // buckets.HOUR_MS, path, status), 1, size or 0)


def _add(totals: Totals, key: tuple, hits: int, size: int) -> None:
    entry = totals.get(key)
    if entry is None:
        totals[key] = [hits, size]
    else:
        entry[0] += hits
        entry[1] += size


def _hour_of(start: dt.datetime) -> dt.datetime:
    return schema.from_epoch_ms(schema.epoch_ms(start) // buckets.HOUR_MS * buckets.HOUR_MS)


def _projection(extra: tuple = ()) -> dict:
    return {name: 1 for name in ("site", "start", "end", "n", buckets.TIME, *_COLUMNS, *extra)}

