"""Unique visitors: HyperLogLog sketches (Apache DataSketches), appended, merged on read.

A visitor is one (client address, user agent) pair. Each flush *appends* one document
per bucket it touched, holding a serialized sketch of the pairs it saw; it never reads
or rewrites a sketch, so concurrent writers (server workers, an ingest beside the
server) cannot lose each other's updates. Visitors over any range are the *union* of the
sketches of its buckets, never a sum of counts. A union is idempotent (adding a sketch
twice changes nothing), which makes re-sent flushes and concurrent compaction harmless.

Collections ``visitors.hourly`` (whole site, per UTC hour) and ``visitors.daily`` (per
UTC day, the whole site ``*`` and each page; the site's documents also hold one small
sketch per dimension value, in an array, so values never become field names)::

    {_id, metadata: {date, site, page}, s: <sketch bytes>, values: [{d, v, s}, ...]}

Only the sketch is stored: HLL registers derived from 64-bit hashes of the pairs, no
address, agent or hash of one per visitor.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import uuid
from collections.abc import Iterable

from bson import Binary
from datasketches import hll_sketch, hll_union, tgt_hll_type
from pymongo.errors import BulkWriteError

from .. import schema

HOURLY, DAILY = "visitors.hourly", "visitors.daily"
LG_K = 14            # site and page sketches: relative standard error ~0.8%
LG_K_VALUE = 11      # per dimension value: ~2.3%, and small (list mode) for rare values
DUPLICATE_KEY = 11000


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


def partial_id(writer: str, seq: int, coll: str, date: dt.datetime, site: str,
               page: str) -> str:
    """Deterministic: re-sending a flush inserts nothing new."""
    key = hashlib.sha1(f"{site}\0{page}".encode()).hexdigest()[:16]
    return f"{date:%Y%m%d%H}/{key}/{coll[-6:]}/{writer}/{seq}"


def partial_doc(doc_id: str, date: dt.datetime, site: str, page: str, sketch: hll_sketch,
                values: dict[tuple[str, str], hll_sketch] | None = None) -> dict:
    doc = {"_id": doc_id, "metadata": schema.metadata(date, site, page), "s": dump(sketch)}
    if values is not None:
        doc["values"] = [{"d": d, "v": v, "s": dump(s)} for (d, v), s in values.items()]
    return doc


def append(db, coll: str, docs: list[dict]) -> None:
    """Insert partial sketches; ones already stored (a re-sent flush) are skipped."""
    if not docs:
        return
    try:
        db[coll].insert_many(docs, ordered=False)
    except BulkWriteError as exc:
        errors = exc.details.get("writeErrors", [])
        if exc.details.get("writeConcernErrors") or any(
                e.get("code") != DUPLICATE_KEY for e in errors):
            raise


def ensure_indexes(db) -> None:
    for coll in (HOURLY, DAILY):
        db[coll].create_index(schema.STATS_INDEX, name="site_page_date")


def fetch(db, coll: str, site: str, page: str, dates: list[dt.datetime],
          values: bool = False) -> list[dict]:
    if not dates:
        return []
    projection = {"s": 1, "metadata.date": 1, "_id": 1}
    if values:
        projection["values"] = 1
    return list(db[coll].find({"metadata.site": site, "metadata.page": page,
                               "metadata.date": {"$in": dates}}, projection))


def compact(db, coll: str, site: str, page: str, date: dt.datetime) -> int:
    """Merge a bucket's partial sketches into one document and delete the partials read.
    Safe beside writers and other compactions: partials appended meanwhile are kept, and
    a reader seeing both the merged document and its partials unions duplicates, which
    changes nothing. Returns the partials removed."""
    docs = fetch(db, coll, site, page, [date], values=True)
    if len(docs) < 2:
        return 0
    by_value: dict[tuple[str, str], list] = {}
    for doc in docs:
        for item in doc.get("values", ()):
            by_value.setdefault((item["d"], item["v"]), []).append(load(item["s"]))
    merged_values = {key: union(sketches, LG_K_VALUE) for key, sketches in by_value.items()}
    merged = union(load(doc["s"]) for doc in docs)
    doc_id = f"{date:%Y%m%d%H}/compact/{uuid.uuid4().hex}"
    db[coll].insert_one(partial_doc(doc_id, date, site, page, merged,
                                    merged_values if by_value else None))
    result = db[coll].delete_many({"_id": {"$in": [doc["_id"] for doc in docs]}})
    return result.deleted_count


def compact_all(db, before: dt.datetime) -> int:
    """Compact every bucket that starts before ``before`` and has several partials."""
    removed = 0
    for coll in (HOURLY, DAILY):
        groups = db[coll].aggregate([
            {"$match": {"metadata.date": {"$lt": before}}},
            {"$group": {"_id": {"site": "$metadata.site", "page": "$metadata.page",
                                "date": "$metadata.date"}, "n": {"$sum": 1}}},
        ])
        for group in groups:
            if group["n"] > 1:
                key = group["_id"]
                date = key["date"]
                if date.tzinfo is None:
                    date = date.replace(tzinfo=dt.UTC)
                removed += compact(db, coll, key["site"], key["page"], date)
    return removed
