"""DimensionRecorder: referrers, status codes, browsers, countries... and visitor sketches,
counted as hits arrive, with the HitRecorder's coalescing and exactly-once flush guard.

Counters live in ``dims.hourly``, ``dims.daily`` and ``dims.monthly``, one document per
site and UTC hour, day or month holding every dimension (page ``*``: per-page counters
would double the upserts of a flush, see README; a page's breakdown comes from raw
events, within their retention)::

    {_id: "20150517/site*", metadata: {date, site, page: "*"}, hits: N,
     v: {referrer: {"news%2Eexample": 3, "(direct)": 9, ...}, status: {"200": 11}, ...}}

Values are escaped field names (see ``encoding``) so one ``$inc`` upsert counts them all;
each dimension of each document holds at most ``CAPS[dim]`` values, the rest summed as
``(other)``. To cap, a flush must know which values a document already holds: it asks
the documents it has not seen before (one ``find`` per collection per flush) and then
remembers what it wrote. With one writer (the embedded store belongs to one process) the
cap is exact; writers running side by side on MongoDB may each add values in the same
second, so a document can then exceed the cap by the values of those few flushes.
Visitor sketches are appended per flush (see ``sketches``) before the counters.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections import Counter

from pymongo.errors import PyMongoError

from .. import schema, validation
from ..errors import RecorderOverloadedError
from ..recorder import RECORD_ATTEMPTS, HitRecorder, _Doc
from . import sketches
from .classify import Dimensions
from .encoding import cap, escape

log = logging.getLogger(__name__)
HOURLY, DAILY, MONTHLY = "dims.hourly", "dims.daily", "dims.monthly"
COLLECTIONS = (HOURLY, DAILY, MONTHLY)
MAX_KNOWN = 50_000        # documents whose values are remembered between flushes
WHOLE = validation.WHOLE_SITE


class _Docs(dict):
    """A flush's counter documents, plus the sketch documents written before them."""

    sketches: list[tuple[str, dict]]


def _bucket_ids(site: str, page: str, date: dt.datetime, level: str) -> str:
    fmt = {"hour": "%Y%m%d%H", "day": "%Y%m%d", "month": "%Y%m"}[level]
    return f"{date.strftime(fmt)}/{site}{page}"


class DimensionRecorder(HitRecorder):
    """``record(site, page, ts, dims, n)`` counts ``n`` hits of one visitor with the
    dimensions ``dims`` (:func:`classify`); memory only, flushed like a HitRecorder."""

    def __init__(self, db, **kwargs):
        kwargs.setdefault("preallocate_next_day", False)
        super().__init__(db, **kwargs)
        self._known: dict[tuple[str, str], dict[str, set[str]]] = {}

    def record(self, site: str, page: str, ts: dt.datetime | None = None,
               dims: Dimensions | None = None, n: int = 1) -> None:
        if self._closed:
            raise RecorderOverloadedError("the recorder is closed")
        if dims is None:
            raise validation.InvalidRangeError("a dimension record needs its dimensions")
        ts = validation.timestamp(self._clock() if ts is None else ts)
        if type(n) is not int or n < 1:
            raise validation.InvalidRangeError(f"hit count must be a positive integer, got {n!r}")
        site, _ = self._names.get((site, page)) or self._validate(site, page)
        hour = dt.datetime(ts.year, ts.month, ts.day, ts.hour, tzinfo=dt.UTC)
        day = hour.replace(hour=0)
        for attempt in range(RECORD_ATTEMPTS):
            with self._lock:
                unit = self._pending.get(("u", site, hour))
                if unit is None and self._outstanding() >= 2 * self.max_pending_docs:
                    full = True
                else:
                    full = False
                    if unit is None:
                        unit = self._open(site, hour, day)
                    unit["hits"] += n
                    counts = unit["c"]
                    for pair in dims.values:
                        counts[pair] += n
                    if dims.visitor is not None:
                        self._sketch(("h", site, WHOLE, hour)).update(dims.visitor)
                        self._sketch(("d", site, WHOLE, day)).update(dims.visitor)
                        values = self._pending[("values", site, day)]
                        for pair in dims.values:
                            sketch = values.get(pair)
                            if sketch is None:
                                sketch = values[pair] = sketches.new(sketches.LG_K_VALUE)
                            sketch.update(dims.visitor)
                    self._pending_hits += n
                    self._stats["hits_accepted"] += n
                    overfull = len(self._pending_docs) >= self.max_pending_docs
                    break
            if attempt == RECORD_ATTEMPTS - 1:
                self._refuse()
            self._drain_or_refuse()
        if not full and overfull and self._may_flush_now():
            self._stats["backpressure_flushes"] += 1
            self._try_flush()

    def _open(self, site: str, hour: dt.datetime, day: dt.datetime) -> dict:
        self._pending_docs.update(((HOURLY, site, hour), (DAILY, site, day),
                                   (MONTHLY, site, day.replace(day=1))))
        self._pending.setdefault(("values", site, day), {})
        unit = self._pending[("u", site, hour)] = {"hits": 0, "c": Counter()}
        return unit

    def _sketch(self, key: tuple) -> object:
        sketch = self._pending.get(key)
        if sketch is None:
            sketch = self._pending[key] = sketches.new()
        return sketch

    # -- flushing ------------------------------------------------------------------------
    def _documents(self, pending: dict) -> _Docs:
        """The capped ``$inc`` of every counter document and the sketch documents."""
        raw: dict[tuple[str, str], tuple[dict, int, Counter]] = {}
        for key, unit in pending.items():
            if key[0] != "u":
                continue
            _, site, hour = key
            day = hour.replace(hour=0)
            places = [(HOURLY, hour, "hour"), (DAILY, day, "day"),
                      (MONTHLY, day.replace(day=1), "month")]
            for coll, date, level in places:
                doc_key = (coll, _bucket_ids(site, WHOLE, date, level))
                entry = raw.get(doc_key)
                if entry is None:
                    entry = raw[doc_key] = (schema.metadata(date, site, WHOLE), 0, Counter())
                entry[2].update(unit["c"])
                raw[doc_key] = (entry[0], entry[1] + unit["hits"], entry[2])
        known = self._known_values(list(raw))
        docs = _Docs()
        kept_values: dict[tuple[str, dt.datetime], dict[str, set[str]]] = {}
        for doc_key, (meta, hits, counts) in raw.items():
            by_dim: dict[str, dict[str, int]] = {}
            for (dim, value), n in counts.items():
                values = by_dim.setdefault(dim, {})
                name = escape(value)
                values[name] = values.get(name, 0) + n
            inc = Counter({"hits": hits})
            doc_known = known.get(doc_key)
            for dim, values in by_dim.items():
                have = None if doc_known is None else doc_known.setdefault(dim, set())
                kept = cap(dim, have, values)
                if have is not None:
                    have.update(kept)
                for name, n in kept.items():
                    inc[f"v.{dim}.{name}"] += n
                if doc_key[0] == DAILY:
                    kept_values.setdefault((meta["site"], meta["date"]), {})[dim] = set(kept)
            docs[doc_key] = _Doc(doc_key[0], meta, inc)
        docs.sketches = self._sketch_docs(pending, kept_values)
        return docs

    def _known_values(self, keys: list[tuple[str, str]]) -> dict:
        """The values each document holds per dimension: remembered, else read; None
        for a document that could not be read (no new value is admitted to it)."""
        if len(self._known) > MAX_KNOWN:
            self._known.clear()
        known = {key: self._known[key] for key in keys if key in self._known}
        missing: dict[str, list[str]] = {}
        for coll, doc_id in keys:
            if (coll, doc_id) not in known:
                missing.setdefault(coll, []).append(doc_id)
        for coll, ids in missing.items():
            try:
                found = {doc["_id"]: doc.get("v", {}) for doc in
                         self.db[coll].find({"_id": {"$in": ids}}, {"v": 1})}
            except PyMongoError as exc:
                # Unknown contents: new values count under "(other)" in this flush, so
                # the cap holds whatever the document already has.
                log.warning("could not read dimension values (%s); new values count as "
                            "(other) in this flush", exc)
                known.update({(coll, doc_id): None for doc_id in ids})
                continue
            for doc_id in ids:
                values = {dim: set(v) for dim, v in found.get(doc_id, {}).items()}
                self._known[(coll, doc_id)] = known[(coll, doc_id)] = values
        return known

    def _sketch_docs(self, pending: dict, kept_values: dict) -> list[tuple[str, dict]]:
        writer = self._guard.rsplit(".", 1)[-1]
        out = []
        for key, value in pending.items():
            if key[0] in ("h", "d"):
                level, site, page, date = key
                coll = sketches.HOURLY if level == "h" else sketches.DAILY
                doc_id = sketches.partial_id(writer, self._seq, coll, date, site, page)
                values = None
                if level == "d":
                    values = self._capped_values(pending.get(("values", site, date), {}),
                                                 kept_values.get((site, date), {}))
                out.append((coll, sketches.partial_doc(doc_id, date, site, page, value,
                                                       values)))
        return out

    @staticmethod
    def _capped_values(values: dict, kept: dict[str, set[str]]) -> dict:
        """Value sketches of the values the day's counters kept; the rest as (other)."""
        out: dict[tuple[str, str], object] = {}
        other: dict[str, list] = {}
        for (dim, value), sketch in values.items():
            if escape(value) in kept.get(dim, ()):
                out[(dim, value)] = sketch
            else:
                other.setdefault(dim, []).append(sketch)
        for dim, group in other.items():
            merged = sketches.union([*group, *([out[(dim, "(other)")]]
                                               if (dim, "(other)") in out else [])],
                                    sketches.LG_K_VALUE)
            out[(dim, "(other)")] = merged
        return out

    def _write(self, batch) -> int:
        """Sketches first (idempotent appends), then the guarded counter upserts."""
        pending = getattr(batch.docs, "sketches", None)
        if pending:
            by_coll: dict[str, list[dict]] = {}
            for coll, doc in pending:
                by_coll.setdefault(coll, []).append(doc)
            for coll, docs in by_coll.items():
                sketches.append(self.db, coll, docs)
            batch.docs.sketches = []
        return super()._write(batch)


def ensure_indexes(db) -> list[str]:
    """The stats index on the counter and sketch collections; returns their names."""
    for coll in COLLECTIONS:
        db[coll].create_index(schema.STATS_INDEX, name="site_page_date")
    sketches.ensure_indexes(db)
    return [f"{coll}.site_page_date" for coll in (*COLLECTIONS, sketches.HOURLY,
                                                   sketches.DAILY)]
