"""Unique visitors: HyperLogLog sketches (Apache DataSketches), appended, merged on read.

A visitor is one (client address, user agent) pair. Each writing process keeps, per
bucket, a sketch of every pair it has seen, and each flush replaces *its own* document
of that bucket with it (the ``_id`` names the process): it never reads or rewrites
another writer's sketch, so concurrent writers (server workers, an ingest beside the
server) cannot lose each other's updates, and a bucket holds one document per process
that wrote it. Visitors over any range are the *union* of the sketches of its buckets,
never a sum of counts. A union is idempotent (adding a sketch twice changes nothing),
which makes re-sent flushes, restarts and concurrent compaction harmless.

``visitors.hourly|daily|monthly``: ``{_id, metadata: {date, site, page: "*"}, s}``, the
whole site per UTC hour, day, month. ``visitors.values``: per site, UTC day or month and
dimension, one small sketch per value, in an array (values never become field names)::

    {_id, metadata: {date, site, page: "*"}, level: "day", d: "referrer",
     values: [{v: "news.example", s: <bytes>}, ...]}

Only sketches are stored: HLL registers derived from 64-bit hashes of the pairs, no
address, agent or hash of one per visitor.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable

from bson import Binary
from datasketches import hll_sketch, hll_union, tgt_hll_type
from pymongo import ReplaceOne

HOURLY, DAILY, MONTHLY = "visitors.hourly", "visitors.daily", "visitors.monthly"
VALUES = "visitors.values"
COLLECTIONS = (HOURLY, DAILY, MONTHLY, VALUES)
TOTALS = {"hour": HOURLY, "day": DAILY, "month": MONTHLY}
LEVELS = {"dims.hourly": "hour", "dims.daily": "day", "dims.monthly": "month"}
LG_K = 14            # whole-site sketches: relative standard error ~0.8%, <= 8.3 KB
LG_K_VALUE = 11      # per dimension value: ~2.3%, and small (list mode) for rare values


def new(lg_k: int = LG_K) -> hll_sketch:
    return hll_sketch(lg_k, tgt_hll_type.HLL_4)


def dump(sketch: hll_sketch) -> Binary:
    return Binary(sketch.serialize_compact())


def load(data: bytes) -> hll_sketch:
    return hll_sketch.deserialize(bytes(data))


def union(sketches: Iterable[hll_sketch], lg_k: int = LG_K) -> hll_sketch:
    merged = hll_union(lg_k)
    for sketch in sketches:
        merged.update(sketch)
    return merged.get_result(tgt_hll_type.HLL_4)


def estimate(sketches: Iterable[hll_sketch], lg_k: int = LG_K) -> int:
    return int(round(union(sketches, lg_k).get_estimate()))


def partial_id(owner: str, level: str, date: dt.datetime, site: str, dim: str = "") -> str:
    """One document per writing process (``owner``) and bucket."""
    return f"{level[0]}/{date:%Y%m%d%H}/{site}/{dim}/{owner}"


def partial_doc(doc_id: str, meta: dict, sketch: hll_sketch) -> dict:
    return {"_id": doc_id, "metadata": meta, "s": dump(sketch)}


def value_doc(doc_id: str, meta: dict, level: str, dim: str,
              values: dict[str, hll_sketch]) -> dict:
    return {"_id": doc_id, "metadata": meta, "level": level, "d": dim,
            "values": [{"v": v, "s": dump(s)} for v, s in values.items()]}


def save(db, coll: str, docs: list[dict]) -> None:
    """Replace (or create) this process's own documents: idempotent, so a retried or
    re-sent flush writes the same union again."""
    if docs:
        db[coll].bulk_write([ReplaceOne({"_id": doc["_id"]}, doc, upsert=True)
                             for doc in docs], ordered=False)


def _query(site: str, dates: list[dt.datetime]) -> dict:
    return {"metadata.site": site, "metadata.page": "*", "metadata.date": {"$in": dates}}


def fetch(db, level: str, site: str, dates: list[dt.datetime]) -> list[dict]:
    """The whole-site partial sketches of these buckets."""
    if not dates:
        return []
    return list(db[TOTALS[level]].find(_query(site, dates), {"s": 1, "metadata.date": 1}))


def fetch_values(db, level: str, site: str, dim: str, dates: list[dt.datetime]) -> list[dict]:
    """The value sketches of ``dim`` for these day or month buckets."""
    if not dates:
        return []
    return list(db[VALUES].find({**_query(site, dates), "level": level, "d": dim},
                                {"values": 1}))


def compact(db, coll: str, query: dict) -> int:
    """Merge one bucket's partial sketches (``query`` selects them) into one document and
    delete the partials read. Safe beside writers and other compactions: partials
    appended meanwhile are kept, and a reader seeing both the merged document and its
    partials unions duplicates, which changes nothing. Returns the partials removed."""
    docs = list(db[coll].find(query))
    if len(docs) < 2:
        return 0
    first = docs[0]
    doc_id = f"{first['_id']}/compact/{uuid.uuid4().hex[:12]}"
    if coll == VALUES:
        groups: dict[str, list] = {}
        for doc in docs:
            for item in doc["values"]:
                groups.setdefault(item["v"], []).append(load(item["s"]))
        merged = value_doc(doc_id, first["metadata"], first["level"], first["d"],
                           {v: union(g, LG_K_VALUE) for v, g in groups.items()})
    else:
        merged = partial_doc(doc_id, first["metadata"], union(load(d["s"]) for d in docs))
    db[coll].insert_one(merged)
    return db[coll].delete_many({"_id": {"$in": [doc["_id"] for doc in docs]}}).deleted_count


def compact_all(db, before: dt.datetime) -> int:
    """Compact every bucket that starts before ``before`` and has several partials."""
    removed = 0
    for coll in COLLECTIONS:
        key = {"site": "$metadata.site", "date": "$metadata.date"}
        if coll == VALUES:
            key.update(level="$level", d="$d")
        groups = db[coll].aggregate([
            {"$match": {"metadata.date": {"$lt": before}}},
            {"$group": {"_id": key, "n": {"$sum": 1}}},
        ])
        for group in groups:
            if group["n"] < 2:
                continue
            k = group["_id"]
            query = {"metadata.site": k["site"], "metadata.page": "*",
                     "metadata.date": k["date"]}
            if coll == VALUES:
                query.update(level=k["level"], d=k["d"])
            removed += compact(db, coll, query)
    return removed
