"""Unique visitors: HyperLogLog sketches (Apache DataSketches), appended, merged on read.

A visitor is one (client address, user agent) pair. Each writing process keeps, per
bucket, a sketch of every pair it has seen, and each flush replaces *its own* document
of that bucket with it (the ``_id`` names the process): it never reads or rewrites
another writer's sketch, so concurrent writers (server workers, an ingest beside the
server) cannot lose each other's updates, and a bucket holds one document per process
that wrote it. Visitors over any range are the *union* of the sketches of its buckets,
never a sum of counts. A union is idempotent (adding a sketch twice changes nothing),
which makes re-sent flushes, restarts and concurrent compaction harmless.

``visitors.hourly|daily|monthly``: ``{_id, metadata: {date, site, page: "*"}, n, s, h}``,
the whole site per UTC hour, day, month: ``s`` everyone, ``h`` the human visitors (those
with a hit whose ``bot`` is ``human``); ``n`` numbers the owner's saves. The bucket's
counter document (``dims.*``) lists the owners in ``owners``, so every read is by
``_id``. ``visitors.values``: per site, UTC day or month and
dimension, one small sketch per value for its human visitors and one for its bots
(``b: 1``), in an array (values never become field names)::

    {_id, metadata: {date, site, page: "*"}, level: "day", d: "referrer",
     values: [{v: "news.example", s: <bytes>}, {v: "(direct)", s: <bytes>, b: 1}, ...]}

A visitor goes into exactly one of a value's two sketches, so splitting costs no update;
a value's visitors are its human sketch (bots left out) or the union of both (everyone).
Documents written before the split hold one sketch per value, humans and bots together,
without ``b``: read as humans, they include those bots (reads say so, see ``reads``).
The whole-site sketches keep the human visitors in a sketch of their own (``h``), so a
range's human visitors are read to the hour, as everyone's are; documents written before
it have none and read ``s`` (their bots count as visitors).

Only sketches are stored: HLL registers derived from 64-bit hashes of the pairs, no
address, agent or hash of one per visitor.
"""

from __future__ import annotations

import datetime as dt
import math
import uuid
from collections.abc import Iterable
from typing import NamedTuple

from datasketches import hll_sketch, hll_union, tgt_hll_type
from pymongo import ReplaceOne

from .. import validation
from ..stats import schema
from .encoding import DIMENSIONS, clean

HOURLY, DAILY, MONTHLY = "visitors.hourly", "visitors.daily", "visitors.monthly"
VALUES = "visitors.values"
COLLECTIONS = (HOURLY, DAILY, MONTHLY, VALUES)
TOTALS = {"hour": HOURLY, "day": DAILY, "month": MONTHLY}
COUNTERS = {"hour": "dims.hourly", "day": "dims.daily", "month": "dims.monthly"}
LEVELS = {coll: level for level, coll in COUNTERS.items()}
FORMATS = {"hour": "%Y%m%d%H", "day": "%Y%m%d", "month": "%Y%m"}
LG_K = 14            # whole-site sketches: relative standard error ~0.8%, <= 8.3 KB
LG_K_VALUE = 11      # per dimension value: ~2.3%, and small (list mode) for rare values
CONFIDENCE = 2       # standard errors either side of an estimate shown as its error (~95 %)
# Compaction waits this long after a bucket ends (writers flush what they hold first)
# and remembers where it got to under this checkpoint ``_id``; every closed bucket is
# looked at again once a day (``SWEEP_EVERY``).
GRACE = dt.timedelta(minutes=5)
SWEEP_EVERY = dt.timedelta(days=1)
CHECKPOINT_ID = "visitor-sketches"


def new(lg_k: int = LG_K) -> hll_sketch:
    return hll_sketch(lg_k, tgt_hll_type.HLL_4)


def dump(sketch: hll_sketch) -> bytes:
    """The sketch as stored: ``bytes`` are BSON binary data (subtype 0), as ``Binary``
    would make them, without its Python-level constructor (a flush dumps thousands)."""
    return sketch.serialize_compact()


def load(data: bytes) -> hll_sketch:
    return hll_sketch.deserialize(bytes(data))


def union(sketches: Iterable[hll_sketch], lg_k: int = LG_K) -> hll_sketch:
    merged = hll_union(lg_k)
    for sketch in sketches:
        merged.update(sketch)
    return merged.get_result(tgt_hll_type.HLL_4)


class Estimate(NamedTuple):
    """Distinct visitors from sketches: ``n``, and ``error`` the half-width of its
    95 % interval (two standard errors), rounded up; 0 when the sketches hold every
    visitor (few enough to be kept as a list: the count is exact)."""

    n: int
    error: int = 0


def count(sketches: Iterable[hll_sketch], lg_k: int = LG_K) -> Estimate:
    """The distinct visitors of the union of ``sketches``, the same whatever their order
    and however the range was cut into them (hours, days, a month): the estimate reads
    the union's registers alone. A sketch updated item by item also keeps a running
    (HIP) estimate, which depends on the order items and sketches came in: a day read
    from its day sketch and from its 24 hours differed by a visitor or two. A union
    with its own result makes the union read its registers (the composite estimator),
    and adds nothing to them."""
    merged = hll_union(lg_k)
    for sketch in sketches:
        merged.update(sketch)
    merged.update(merged.get_result(tgt_hll_type.HLL_8))
    n = merged.get_estimate()
    spread = max(merged.get_upper_bound(CONFIDENCE) - n, n - merged.get_lower_bound(CONFIDENCE))
    return Estimate(int(round(n)), 0 if spread < 0.5 else math.ceil(spread))


def estimate(sketches: Iterable[hll_sketch], lg_k: int = LG_K) -> int:
    return count(sketches, lg_k).n


def partial_id(owner: str, level: str, date: dt.datetime, site: str, dim: str = "") -> str:
    """One document per writing process (``owner``) and bucket."""
    return f"{level[0]}/{date:%Y%m%d%H}/{site}/{dim}/{owner}"


def partial_doc(doc_id: str, meta: dict, sketch: hll_sketch, humans: hll_sketch) -> dict:
    return {"_id": doc_id, "metadata": meta, "s": dump(sketch), "h": dump(humans)}


def whole(doc: dict, humans: bool = False) -> hll_sketch:
    """A whole-site sketch document's everyone, or its human visitors (``s`` in a
    document written before they had a sketch of their own)."""
    return load(doc.get("h", doc["s"]) if humans else doc["s"])


def value_doc(doc_id: str, meta: dict, level: str, dim: str,
              values: dict[tuple[str, bool], hll_sketch]) -> dict:
    """``values``: {(value, is_bot): sketch}; a value is stored as valid UTF-8 (values
    are cleaned as they are classified: ``encoding.clean``)."""
    return {"_id": doc_id, "metadata": meta, "level": level, "d": dim,
            "values": [{"v": clean(v), "s": dump(s), "b": 1} if bot
                       else {"v": clean(v), "s": dump(s)} for (v, bot), s in values.items()]}


def save(db, coll: str, docs: list[dict]) -> None:
    """Replace (or create) this process's own documents: idempotent, so a retried or
    re-sent flush writes the same union again."""
    if docs:
        db[coll].bulk_write([ReplaceOne({"_id": doc["_id"]}, doc, upsert=True)
                             for doc in docs], ordered=False)


def bucket_id(site: str, date: dt.datetime, level: str) -> str:
    """The ``_id`` of a bucket's counter document (``dims.*``), which lists in ``owners``
    the processes that wrote sketches of that bucket."""
    return f"{date.strftime(FORMATS[level])}/{site}*"


def owners(db, level: str, site: str, dates: list[dt.datetime]) -> dict[dt.datetime, list]:
    """The sketch owners of each bucket, from its counter document (read by ``_id``)."""
    if not dates:
        return {}
    ids = {bucket_id(site, date, level): date for date in dates}
    found = db[COUNTERS[level]].find({"_id": {"$in": list(ids)}}, {"owners": 1})
    return {ids[doc["_id"]]: sorted(doc.get("owners", {})) for doc in found}


def fetch(db, level: str, site: str, dates: list[dt.datetime], dim: str | None = None,
          known: dict | None = None) -> list[dict]:
    """The sketch documents of these buckets (the whole site, or ``dim``'s values), by
    ``_id``: one lookup for the owners (or ``known`` ones), one for the documents."""
    by_date = known if known is not None else owners(db, level, site, dates)
    ids = [partial_id(owner, level, date, site, dim or "")
           for date in dates for owner in by_date.get(date, ())]
    if not ids:
        return []
    coll = VALUES if dim else TOTALS[level]
    return list(db[coll].find({"_id": {"$in": ids}}))


def owner_of(doc_id: str) -> str:
    """The writing process named by a sketch document's ``_id`` (see ``partial_id``)."""
    return doc_id.rsplit("/", 1)[1]


def compact_bucket(db, level: str, site: str, date: dt.datetime) -> int:
    """Merge one bucket's sketch documents into one (a new owner), then delete the
    documents merged, each only if unchanged since it was read (its version ``n``).
    Safe beside writers and other compactions: a writer that saved again meanwhile keeps
    its newer document; a reader seeing both the merged document and the old ones
    unions duplicates, which changes nothing. The owners whose documents are all gone
    leave the bucket's list (``forget_owners``). Returns the documents removed."""
    found = owners(db, level, site, [date]).get(date, [])
    totals = fetch(db, level, site, [date], known={date: found})
    if len(totals) < 2:
        present = {owner_of(d["_id"]) for d in totals}
        forget_owners(db, level, site, date, set(found) - present)
        return 0
    owner = f"c{uuid.uuid4().hex[:12]}"
    meta = totals[0]["metadata"]
    merged = [(TOTALS[level], {**partial_doc(
        partial_id(owner, level, date, site), meta, union(whole(d) for d in totals),
        union(whole(d, humans=True) for d in totals)), "n": 0})]
    old = [(TOTALS[level], totals)]
    if level != "hour":
        for dim in DIMENSIONS:
            docs = fetch(db, level, site, [date], dim, known={date: found})
            if not docs:
                continue
            groups: dict[tuple[str, bool], list] = {}
            for doc in docs:
                for item in doc["values"]:
                    key = (item["v"], bool(item.get("b")))
                    groups.setdefault(key, []).append(load(item["s"]))
            values = {v: union(g, LG_K_VALUE) for v, g in groups.items()}
            merged.append((VALUES, {**value_doc(partial_id(owner, level, date, site, dim),
                                                meta, level, dim, values), "n": 0}))
            old.append((VALUES, docs))
    for coll, doc in merged:
        db[coll].replace_one({"_id": doc["_id"]}, doc, upsert=True)
    db[COUNTERS[level]].update_one({"_id": bucket_id(site, date, level)},
                                   {"$set": {f"owners.{owner}": 1}})
    removed = 0
    kept: set[str] = set()
    for coll, docs in old:
        for doc in docs:
            gone = db[coll].delete_one({"_id": doc["_id"], "n": doc.get("n")}).deleted_count
            removed += gone
            if not gone:
                kept.add(owner_of(doc["_id"]))
    forget_owners(db, level, site, date, set(found) - kept)
    return removed


def forget_owners(db, level: str, site: str, date: dt.datetime, gone: set[str]) -> None:
    """Take owners whose documents were merged and deleted off the bucket's list, so
    reads stop looking for them and the bucket is not compacted again. A writer that
    saved again meanwhile (its document is back) is put back on the list: it sets its
    owner *after* saving, so either its own ``$set`` or this check comes last."""
    if not gone:
        return
    bucket = {"_id": bucket_id(site, date, level)}
    db[COUNTERS[level]].update_one(bucket, {"$unset": {f"owners.{o}": "" for o in gone}})
    ids = [partial_id(o, level, date, site) for o in gone]
    back = {owner_of(d["_id"]) for d in db[TOTALS[level]].find({"_id": {"$in": ids}},
                                                               {"_id": 1})}
    if back:
        db[COUNTERS[level]].update_one(bucket, {"$set": {f"owners.{o}": 1 for o in back}})


def _compact(db, level: str, date_filter: dict) -> int:
    removed = 0
    for doc in db[COUNTERS[level]].find({"metadata.date": date_filter},
                                        {"owners": 1, "metadata": 1}):
        if len(doc.get("owners", {})) > 1:
            meta = doc["metadata"]
            removed += compact_bucket(db, level, meta["site"], validation.stored_time(meta["date"]))
    return removed


def compact_all(db, before: dt.datetime) -> int:
    """Compact every bucket that starts before ``before`` and has several owners."""
    return sum(_compact(db, level, {"$lt": before}) for level in COUNTERS)


def bucket_start(level: str, t: dt.datetime) -> dt.datetime:
    """The start of the UTC hour, day or month holding ``t``."""
    t = t.astimezone(dt.UTC).replace(minute=0, second=0, microsecond=0)
    if level == "hour":
        return t
    return t.replace(hour=0) if level == "day" else t.replace(hour=0, day=1)


def compact_closed(db, now: dt.datetime, since: dt.datetime | None = None) -> int:
    """Compact the buckets that ended at least ``GRACE`` before ``now`` (writers are done
    with them; a late one is still safe, see ``compact_bucket``) and, given ``since`` (a
    previous run's ``now``), only those that ended after that run's cut."""
    removed = 0
    for level in COUNTERS:
        date = {"$lt": bucket_start(level, now - GRACE)}
        if since is not None:
            date["$gte"] = bucket_start(level, since - GRACE)
            if date["$gte"] >= date["$lt"]:
                continue
        removed += _compact(db, level, date)
    return removed


def compact_due(db, now: dt.datetime | None = None) -> int:
    """The periodic compaction (every rollup run calls it): the buckets closed since the
    last run, and once a day (and the first time) every closed bucket, for the old ones
    written again since (an old log ingested, a backfill). Then the checkpoint advances;
    a failed run leaves it, so the next run does its buckets again (harmless)."""
    now = validation.stored_time(now) if now is not None else dt.datetime.now(dt.UTC)
    done = db[schema.CHECKPOINTS].find_one({"_id": CHECKPOINT_ID}) or {}
    since = validation.stored_time(done["until"]) if done.get("until") else None
    swept = validation.stored_time(done["swept"]) if done.get("swept") else None
    if since is not None and since >= now:
        return 0
    full = since is None or swept is None or now - swept >= SWEEP_EVERY
    removed = compact_closed(db, now, None if full else since)
    db[schema.CHECKPOINTS].replace_one(
        {"_id": CHECKPOINT_ID},
        {"until": now, "swept": now if full else swept, "removed": removed,
         "last_run": dt.datetime.now(dt.UTC)}, upsert=True)
    return removed
