"""The shape of a rollup bucket: one document per site and bucket, every page in it.

``{_id, site, start, part, pages, digest, computed}``: ``pages`` holds the rows
``[[page, hits, bytes, 2xx, 3xx, 4xx, 5xx, other], …]``, sorted by page, as deflated JSON
(:func:`rows` reads it: ~15 bytes a row instead of ~90 as BSON); part 0 also holds the
site's totals, ``parts, hits, bytes, mean_bytes, status: {2xx, 3xx, 4xx, 5xx, other}``.
A bucket of more than ``PART_PAGES`` pages is cut into parts 0, 1, … so that no
document nears MongoDB's 16 MB.

Why not one document per page and bucket: a page-hour then cost ~660 bytes with its
indexes, and an ingest of a long log wrote hundreds of thousands of them; a row costs
~45 bytes, an hour of a site is one write, and a level above is a merge of a few
documents. ``digest`` names a part's content, so a run rewrites only what changed
without decoding what is stored.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import json
import zlib
from collections.abc import Iterable

from bson import Binary
from pymongo import ReplaceOne

from .. import bulk
from ..stats import schema

CLASSES = ("2xx", "3xx", "4xx", "5xx", "other")
# Hours of history written without raw events (``queries.backfill``): per site, page and
# UTC day, ``hours.H = {hits, bytes, status}``. The hourly level adds them to the events'.
BACKFILLED = "rollups.backfilled"
PART_PAGES = 20_000
# deflate's level for ``pages``: 6 stores the long tail's rollups in 10 % fewer bytes than
# 1 (7.5 MB against 8.3 on 200,000 lines) for 0.3 s more of a 200,000-line ingest
PAGES_LEVEL = 6
_KEY_FORMAT = {"hourly": "%Y%m%d%H", "daily": "%Y%m%d", "weekly": "%Y%m%d", "monthly": "%Y%m",
               "yearly": "%Y"}
# A page's counts: hits, bytes, then one per status class.
HITS, BYTES, WIDTH = 0, 1, 2 + len(CLASSES)
Counts = list[int]


def rollup_id(level: str, start: dt.datetime, site: str, part: int = 0) -> str:
    """Unique, and never the ``_id`` of an older store's document (``{start}/{site}{page}``,
    ``upgrade``): ``#`` where those have ``/``."""
    return f"{start:{_KEY_FORMAT[level]}}#{part}/{site}"


def status_class(status) -> str:
    if isinstance(status, int) and 200 <= status < 600:
        return f"{status // 100}xx"
    return "other"


def blank() -> Counts:
    return [0] * WIDTH


def add(pages: dict[str, Counts], page: str, hits: int, size: int, cls: str) -> None:
    """Count ``hits`` requests of ``size`` bytes in all, of status class ``cls``."""
    counts = pages.get(page)
    if counts is None:
        counts = pages[page] = blank()
    counts[HITS] += hits
    counts[BYTES] += size
    counts[2 + CLASSES.index(cls)] += hits


def merge(into: dict[str, Counts], rows: Iterable[list]) -> None:
    """Add stored rows (``[page, *counts]``) to ``into``."""
    for page, *counts in rows:
        have = into.get(page)
        if have is None:
            into[page] = counts
        else:
            for i, n in enumerate(counts):
                have[i] += n


def build(level: str, site: str, start: dt.datetime, pages: dict[str, Counts]) -> list[dict]:
    """The documents of one bucket (its parts), from its pages' counts."""
    return build_rows(level, site, start, [[page, *pages[page]] for page in sorted(pages)])


def build_rows(level: str, site: str, start: dt.datetime, rows: list,
               totals: list[int] | None = None) -> list[dict]:
    """The documents of one bucket (its parts), from its rows ``[page, *counts]``
    sorted by page (and their ``totals``, if summed already)."""
    if totals is None:
        totals = [sum(column) for column in itertools.islice(zip(*rows, strict=True), 1, None)]
    totals = totals or blank()
    cuts = [rows[i:i + PART_PAGES] for i in range(0, len(rows), PART_PAGES)] or [[]]
    computed = dt.datetime.now(dt.UTC)
    docs = []
    for part, chunk in enumerate(cuts):
        doc = {"_id": rollup_id(level, start, site, part), "site": site, "start": start,
               "part": part}
        if part == 0:
            doc.update(parts=len(cuts), hits=totals[HITS], bytes=totals[BYTES],
                       mean_bytes=totals[BYTES] / totals[HITS] if totals[HITS] else 0.0,
                       status=dict(zip(CLASSES, totals[2:], strict=True)))
        text = json.dumps(chunk, separators=(",", ":")).encode()
        named = f"{doc.get('parts')}:".encode() + text
        doc.update(pages=Binary(zlib.compress(text, PAGES_LEVEL)),
                   digest=hashlib.blake2b(named, digest_size=12).hexdigest(),
                   computed=computed)
        docs.append(doc)
    return docs


def rows(doc: dict) -> list[list]:
    """A stored part's rows, ``[page, hits, bytes, 2xx, 3xx, 4xx, 5xx, other]`` each."""
    pages = doc.get("pages")
    if not pages:
        return []
    return json.loads(zlib.decompress(pages))


def page_rows(doc: dict, wanted: set[str]) -> Iterable[dict]:
    """The rows of ``wanted`` pages in a stored part, each as a bucket of its own:
    ``{page, start, hits, bytes, mean_bytes, status}``."""
    for page, hits, size, *classes in rows(doc):
        if page in wanted:
            yield {"page": page, "start": doc["start"], "hits": hits, "bytes": size,
                   "mean_bytes": size / hits if hits else 0.0,
                   "status": dict(zip(CLASSES, classes, strict=True))}


def write_level(db, level: str, docs: list[dict]) -> int:
    """Store each recomputed bucket document, idempotently by ``_id``: new ones are
    inserted, changed ones replaced (``ReplaceOne(upsert)``), identical ones (same
    ``digest``) left alone, and parts a bucket no longer has removed. Returns how many
    were written. Reading the current digests first (``bulk.find_by_ids``) saves
    rewriting the unchanged majority on every run."""
    coll = db[schema.ROLLUPS[level]]
    current = {old["_id"]: old for old in bulk.find_by_ids(
        coll, [doc["_id"] for doc in docs], {"digest": 1, "parts": 1})}
    fresh = [doc for doc in docs if doc["_id"] not in current]
    changed = [doc for doc in docs if doc["_id"] in current
               and current[doc["_id"]].get("digest") != doc["digest"]]
    written = len(fresh) + len(changed)
    # Another run inserted some of the same buckets meanwhile: same values, but replace
    # them to be sure.
    changed += [fresh[i] for i in bulk.insert_new(coll, fresh)]
    if changed:
        coll.bulk_write([ReplaceOne({"_id": doc["_id"]}, doc, upsert=True) for doc in changed],
                        ordered=False)
    for doc in docs:
        if doc["part"] == 0 and current.get(doc["_id"], {}).get("parts", 1) > doc["parts"]:
            coll.delete_many({"site": doc["site"], "start": doc["start"],
                              "part": {"$gte": doc["parts"]}})
    return written
