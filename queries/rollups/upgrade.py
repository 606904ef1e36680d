"""Rollups of a store written before site buckets (one document per page and bucket,
indexed by ``site_page_start``), moved into one document per site and bucket on first
open.

A level is read a site and a month of bucket starts at a time: the old documents of the
window are merged into the new shape (``documents.build``), written as a rollup run
writes them (``documents.write_level``: idempotent by ``_id`` and content), then
deleted. Once a level holds no old document its old indexes are dropped, and that is
what says the level is done. A process killed midway, or two opening the store at once,
write the same documents again and delete the same old ones, so nothing is lost or
doubled. The rollups are converted, not recomputed: the raw events behind old buckets
may be gone.
"""

from __future__ import annotations

import datetime as dt
import logging

from .. import validation
from ..stats import schema
from . import documents

log = logging.getLogger(__name__)
MARK = "site_page_start"          # the index every older store's rollup level has
OLD_INDEXES = (MARK, "site_day_sums", "site_week_sums", "site_month_sums", "site_year_sums",
               "site_day", "site_week", "site_month", "site_year")
OLD = {"page": {"$exists": True}}
_READ = {"page": 1, "start": 1, "hits": 1, "bytes": 1, "status": 1}


def move_old_rollups(db) -> int:
    """Convert every level still in the old shape; returns the old documents read (0
    when there is none)."""
    moved = 0
    for level in schema.ROLLUP_LEVELS:
        coll = db[schema.ROLLUPS[level]]
        indexes = set(coll.index_information())
        if MARK not in indexes:
            continue
        moved += _convert(db, level, coll)
        for name in indexes & set(OLD_INDEXES):
            coll.drop_index(name)
    return moved


def _convert(db, level: str, coll) -> int:
    first = coll.find_one(OLD, {"start": 1}, sort=[("start", 1)])
    if first is None:
        return 0
    log.warning("moving the %s rollups of an older store into site buckets (once)", level)
    last = coll.find_one(OLD, {"start": 1}, sort=[("start", -1)])
    lo, end = (schema.month_start(validation.timestamp(d["start"])) for d in (first, last))
    read = 0
    for site in coll.distinct("site", OLD):
        month = lo
        while month <= end:
            after = (month + dt.timedelta(days=32)).replace(day=1)
            window = {"site": site, "start": {"$gte": month, "$lt": after}, **OLD}
            buckets: dict[dt.datetime, dict] = {}
            for doc in coll.find(window, _READ):
                read += 1
                if doc["page"] == "*":
                    continue
                status = doc.get("status") or {}
                counts = [doc["hits"], doc["bytes"],
                          *(status.get(c, 0) for c in documents.CLASSES)]
                start = validation.timestamp(doc["start"])
                documents.merge(buckets.setdefault(start, {}), [[doc["page"], *counts]])
            documents.write_level(db, level, [
                d for start, pages in sorted(buckets.items())
                for d in documents.build(level, site, start, pages)])
            coll.delete_many(window)
            month = after
    return read
