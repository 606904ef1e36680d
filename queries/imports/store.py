"""Where imported days live, apart from everything hitboard counts (so the Rollups
checks never meet them): ``imported.daily``, a document per site and day,

    {_id: "<site>|<YYYYMMDD>", site, day: <UTC midnight of the date>, file: <sha256>,
     totals: {visitors, pageviews, bounces, visits, visit_duration},
     tables: {<table>: [[*keys, *counts], ...]}}      (the layout's keys and counts)

and ``imported.files``, a record per site and archive imported (its SHA-256), written
last: the same archive again changes nothing, and an import cut short is done again
whole. Another archive replaces the days it covers (days it covers without rows are
left empty), so a day's figures always come from one archive.
"""

from __future__ import annotations

import datetime as dt

from pymongo import ASCENDING

from .. import validation
from .archive import Archive
from .layout import TABLES

DAYS = "imported.daily"
FILES = "imported.files"
COLLECTIONS = (DAYS, FILES)
MAX_ROWS = 10_000       # rows a table keeps a day; the fewest visitors past it summed
OTHER = "(other)"


def ensure_indexes(db) -> list[str]:
    return [db[DAYS].create_index([("site", ASCENDING), ("day", ASCENDING)],
                                  name="site_day")]


def day_of(text: str) -> dt.datetime:
    """``YYYYMMDD`` as the UTC midnight that labels the date."""
    return dt.datetime.strptime(text, "%Y%m%d").replace(tzinfo=dt.UTC)


def save(db, site: str, found: Archive) -> bool:
    """Keep ``found``'s days for ``site``; False if this archive was imported already."""
    site = validation.site(site)
    file_id = f"{site}|{found.sha256}"
    if db[FILES].find_one({"_id": file_id}, {"_id": 1}) is not None:
        return False
    first, last = day_of(found.first), day_of(found.last)
    db[DAYS].delete_many({"site": site, "day": {"$gte": first, "$lte": last}})
    docs = [_document(site, day, tables, found.sha256)
            for day, tables in sorted(found.days.items())]
    for i in range(0, len(docs), 100):
        db[DAYS].insert_many(docs[i:i + 100], ordered=False)
    db[FILES].replace_one({"_id": file_id}, {
        "_id": file_id, "site": site, "sha256": found.sha256, "first": first,
        "last": last, "days": len(docs), "tables": sorted(found.tables),
        "imported": dt.datetime.now(dt.UTC)}, upsert=True)
    return True


def _document(site: str, day: str, tables: dict, sha256: str) -> dict:
    visitors = tables.get("visitors", {}).get((), None)
    counts = TABLES["visitors"].counts
    totals = dict(zip(counts, visitors or [0] * len(counts), strict=True))
    kept = {name: _capped(name, rows) for name, rows in tables.items() if name != "visitors"}
    return {"_id": f"{site}|{day}", "site": site, "day": day_of(day), "file": sha256,
            "totals": totals, "tables": kept}


def _capped(name: str, rows: dict[tuple, list[int]]) -> list[list]:
    """A table's rows, the ``MAX_ROWS`` with most visitors first, the rest summed."""
    table = TABLES[name]
    ranked = sorted(rows.items(), key=lambda item: (-item[1][0], item[0]))
    kept = [[*key, *counts] for key, counts in ranked[:MAX_ROWS]]
    if len(ranked) > MAX_ROWS:
        summed = [sum(col) for col in zip(*(c for _, c in ranked[MAX_ROWS:]), strict=True)]
        kept.append([OTHER, *[""] * (len(table.keys) - 1), *summed])
    return kept


def days(db, site: str, first: dt.datetime, last: dt.datetime,
         fields: tuple[str, ...] = ("totals",)) -> list[dict]:
    """The imported days of ``site`` labelled in [first, last), oldest first."""
    projection = {"_id": 0, "day": 1, **{f: 1 for f in fields}}
    return list(db[DAYS].find({"site": validation.site(site),
                               "day": {"$gte": first, "$lt": last}}, projection)
                .sort("day", ASCENDING))


def remove(db, site: str) -> dict[str, int]:
    """Every imported day and file record of ``site``."""
    name = validation.site(site)
    return {coll: db[coll].delete_many({"site": name}).deleted_count for coll in COLLECTIONS}
