"""Raw events stored in buckets: one document per site, UTC hour and write of at most
``BUCKET_EVENTS`` requests, its fields as parallel arrays (MongoDB's bucket pattern, the
layout of its time-series collections, whose buckets also span an hour at most).

A log's half million requests are then ~1,000 documents, not 500,000: a store writes and
indexes a document per bucket, and a reader decodes whole columns in C, each string
once per bucket (a bucket's thousand requests share a few hundred pages, agents and
referrers), counting their indexes rather than the strings. A document per
request cost the embedded store ~13 µs of B-tree work each (table, ``_id`` and two
site indexes), more than parsing, counting and classifying the line together.

    {_id, site, start, end, n, ingested, t: <ms since the epoch, int64s>,
     status: {c: "H", p: <uint16s>}, bytes: {c: "q", p: <int64s>},
     host: {z: <the distinct values, JSON, deflated>, i: <per event, the index of its
     value, uint16s>} (``v: [distinct values]`` instead of ``z`` when they are short),
     and so method, path, query, referrer, user_agent and country (only when an event
     has one),
     stream, first, last (events of a log file: its pass and the first and last lines'
     byte offsets; ``_id`` "<stream>/<first>", both in hexadecimal, so ids sort as the
     file does)}

``start`` and ``end`` are the bucket's first and last request times, so a time range
reads the buckets that overlap it (index ``site_end``), and no more than an hour's worth
of a bucket lies outside it. A column's distinct values are a plain list (``v``), left
to the store's compression: the embedded store's zstd with the collection's dictionary
(trained on its own buckets: common agents, referrers, path prefixes) packs the long
tail's buckets into 12 % fewer bytes than deflating each column alone did (6.6 MB
against 7.6 of zstd frames on 200,000 lines); MongoDB compresses its blocks. Only a list past
``DEFLATE_FROM`` bytes of JSON (a scanner's thousand long paths) is deflated (``z``),
so a bucket stays far below BSON's 16 MB. Buckets written before (numbers as arrays,
columns deflated from 256 bytes) read as they are.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
import zlib
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from operator import itemgetter

from bson import Binary

from .. import bulk
from ..stats import schema

BUCKET_EVENTS = 1000
HOUR_MS = 3_600_000      # a bucket's events lie within one UTC hour
COLUMNS = ("host", "method", "path", "query", "status", "bytes", "referrer", "user_agent",
           "country")
TIME = "t"
NUMBERS = ("status", "bytes")   # stored as they are; the other columns as distinct values
ROW = ("time", "site", *COLUMNS)   # an event as packed: a tuple of these fields, in order
_NUMBER_TYPES = {"status": "H", "bytes": "q"}
DEFLATE_FROM = 65_536    # bytes of a column's distinct values as JSON
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_MS = dt.timedelta(milliseconds=1)


def row(event: Mapping) -> tuple:
    """An event document as :func:`pack` takes it: its ``ROW`` fields (None if absent)."""
    return tuple(map(event.get, ROW))


def pack(rows: list[tuple], ingested: dt.datetime,
         keys: list[tuple[int, int]] | None = None) -> list[dict]:
    """The bucket documents of events given as rows (``ROW`` fields, see :func:`row`),
    with ``keys`` (each event's ``(stream, offset)``) if they come from log files: see
    :func:`pack_columns`. Rows, not documents: tuples are transposed in C."""
    if not rows:
        return []
    times, sites, *values = zip(*rows, strict=True)
    streams, offsets = zip(*keys, strict=True) if keys else ([None] * len(rows), None)
    return pack_columns(times, sites, dict(zip(COLUMNS, values, strict=True)), ingested,
                        streams, offsets)


def pack_columns(times: Sequence[dt.datetime], sites: Sequence[str],
                 columns: Mapping[str, Sequence], ingested: dt.datetime,
                 streams: Sequence[int | None], offsets: Sequence[int] | None,
                 ) -> list[dict]:
    """The bucket documents of events given column by column (``columns``: values of
    ``COLUMNS``; one left out is None for every event): per site, UTC hour (and log
    pass) in their order, ``BUCKET_EVENTS`` at most each. Events of log files have their
    pass (``streams``) and line's byte offset (``offsets``): buckets are named by pass
    and first offset (``collection.forget``)."""
    times = _epoch_ms(times)
    groups: dict[tuple, list[int]] = {}
    for i, key in enumerate(zip(sites, [ms // HOUR_MS for ms in times], streams,
                                strict=True)):
        group = groups.get(key)
        if group is None:
            group = groups[key] = []
        group.append(i)
    out = []
    for (site, _, stream), indexes in groups.items():
        for i in range(0, len(indexes), BUCKET_EVENTS):
            part = indexes[i:i + BUCKET_EVENTS]
            doc = _bucket(site, _picker(part), times, columns, ingested)
            if stream is not None:
                first, last = offsets[part[0]], offsets[part[-1]]
                name = stream_name(stream)
                doc = {"_id": f"{name}/{first:012x}", "stream": name, "first": first,
                       "last": last, **doc}
            out.append(doc)
    return out


def stream_name(stream: int) -> str:
    """A 64-bit pass key as stored (BSON integers are signed)."""
    return f"{stream:016x}"


def _epoch_ms(times: Sequence[dt.datetime]) -> list[int]:
    """Computed once per distinct time: a log's lines share each second's datetime."""
    distinct = set(times)
    try:
        ms = {t: (t - _EPOCH) // _MS for t in distinct}
    except TypeError:                   # a naive datetime among them (UTC)
        ms = {t: schema.epoch_ms(t) for t in distinct}
    return list(map(ms.__getitem__, times))


def _picker(indexes: list[int]):
    """A function from a column to its values at ``indexes``, as a list."""
    if len(indexes) == 1:
        only = indexes[0]
        return lambda values: [values[only]]
    get = itemgetter(*indexes)
    return lambda values: list(get(values))


def _bucket(site: str, pick, times: list[int], columns: Mapping[str, Sequence],
            ingested: dt.datetime) -> dict:
    mine = pick(times)
    doc = {"site": site, "start": schema.from_epoch_ms(min(mine)),
           "end": schema.from_epoch_ms(max(mine)), "n": len(mine), "ingested": ingested,
           TIME: _packed("q", mine)}
    for column in COLUMNS:
        if column not in columns:
            continue
        values = pick(columns[column])
        if column in NUMBERS:
            doc[column] = _numbers(column, values)
        elif column != "country" or any(v is not None for v in values):
            doc[column] = _encoded(values)
    return doc


def _encoded(values: list) -> dict:
    """A column as its distinct values (deflated past ``DEFLATE_FROM`` bytes of JSON)
    and, per event, the index of its own."""
    distinct = list(dict.fromkeys(values))
    codes = dict(zip(distinct, range(len(distinct)), strict=True))
    out = {"i": _packed("H", list(map(codes.__getitem__, values)))}
    text = json.dumps(distinct, separators=(",", ":")).encode()
    if len(text) >= DEFLATE_FROM:
        out["z"] = Binary(zlib.compress(text, 6))
    else:
        out["v"] = distinct
    return out


def _numbers(column: str, values: list) -> dict | list:
    """A number column packed (``_packed``), or as it is if a value does not fit."""
    typecode = _NUMBER_TYPES[column]
    try:
        return {"c": typecode, "p": _packed(typecode, values)}
    except (TypeError, OverflowError):
        return values


def _packed(typecode: str, numbers: list[int]) -> Binary:
    """Numbers as one binary value (little-endian), which decodes as one copy where a
    BSON array decodes element by element."""
    packed = array(typecode, numbers)
    if sys.byteorder != "little":
        packed.byteswap()
    return Binary(packed.tobytes())


def _unpacked(typecode: str, data: bytes) -> array:
    numbers = array(typecode)
    numbers.frombytes(data)
    if sys.byteorder != "little":
        numbers.byteswap()
    return numbers


def times(bucket: dict) -> array:
    """The bucket's request times, ms since the epoch, in event order."""
    return _unpacked("q", bucket[TIME])


def events_in(db, filter: dict) -> int:
    """How many events the buckets matching ``filter`` hold (their ``n``)."""
    return sum(bucket["n"] for bucket in db[schema.EVENTS].find(filter, {"_id": 0, "n": 1}))


def overlapping(db, site: str, start: dt.datetime, end: dt.datetime,
                columns: Iterable[str], collection: str = schema.EVENTS) -> Iterator[dict]:
    """The buckets of ``site`` holding requests of [start, end], with their ``n``,
    ``start``, ``end``, ``t`` and ``columns`` (of ``events.apart`` with ``collection``)."""
    return db[collection].find(
        {"site": site, "end": {"$gte": start}, "start": {"$lte": end}}, _projection(columns),
        sort=[("end", 1)])


def by_ids(db, ids: list, columns: Iterable[str]) -> Iterator[dict]:
    """The buckets ``ids``, with what ``overlapping`` reads and ``columns``."""
    return bulk.find_by_ids(db[schema.EVENTS], ids, _projection(columns))


def newest(db, filter: dict, columns: Iterable[str]) -> Iterator[dict]:
    """The buckets matching ``filter`` (of one site), newest first (by ``end``, then
    ``_id``), with ``columns``: read a few at a time, then more (4, 8, 16, then 32 at a
    time), since a read decodes every bucket it returns and a caller often stops after
    the first. A
    bucket written meanwhile shifts the pages down: one already returned is not again."""
    projection, seen = _projection(columns), set()
    skip, size = 0, 4
    while True:
        page = list(db[schema.EVENTS].find(filter, projection, sort=[("end", -1), ("_id", -1)],
                                           skip=skip, limit=size))
        for bucket in page:
            if bucket["_id"] not in seen:
                seen.add(bucket["_id"])
                yield bucket
        if len(page) < size:
            return
        skip, size = skip + size, min(size * 2, 32)


def _projection(columns: Iterable[str]) -> dict:
    return {"_id": 1, "n": 1, "start": 1, "end": 1, TIME: 1, **{c: 1 for c in columns}}


def column(bucket: dict, name: str, n: int) -> list:
    """A column of ``bucket`` (``n`` events), ``None`` s where it was never written."""
    values, codes = coded(bucket, name, n)
    return [values[i] for i in codes] if codes is not None else values


def coded(bucket: dict, name: str, n: int) -> tuple[list, list | None]:
    """A column as ``(values, codes)``, event ``i``'s value being ``values[codes[i]]``;
    ``(values, None)`` for a column stored plain (numbers), event ``i``'s ``values[i]``.
    Counting codes and naming only the distinct ones decodes far fewer strings."""
    stored = bucket.get(name)
    if stored is None:
        return [None], [0] * n
    if not isinstance(stored, dict):
        return stored, None
    if "p" in stored:
        return _unpacked(stored["c"], stored["p"]).tolist(), None
    if "z" in stored:
        return json.loads(zlib.decompress(stored["z"])), _unpacked("H", stored["i"])
    return stored["v"], _unpacked("H", stored["i"])


def events(bucket: dict, indexes: Iterable[int]) -> list[dict]:
    """Events ``indexes`` of ``bucket`` as documents (``_id``: the bucket's and the
    index), fields they never had left out; each column is decoded once."""
    indexes = list(indexes)
    ms, site = times(bucket), bucket["site"]
    docs = [{"_id": f"{bucket['_id']}:{i}", "time": schema.from_epoch_ms(ms[i]),
             "site": site} for i in indexes]
    for name in COLUMNS:
        values, codes = coded(bucket, name, bucket["n"])
        for doc, i in zip(docs, indexes, strict=True):
            value = values[i] if codes is None else values[codes[i]]
            if value is not None:
                doc[name] = value
    return docs
