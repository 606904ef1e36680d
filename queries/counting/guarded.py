"""The write side of a flush: a batch of ``$inc`` upserts applied exactly once per document
under the engine's guard (see ``engine``), what a partly failed write applied dropped
from it, and a batch failing for its content written document by document, what still
fails set aside (``queries.quarantine``)."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from pymongo import InsertOne, UpdateOne
from pymongo.errors import BulkWriteError, PyMongoError

from .. import bulk
from ..errors import DUPLICATE_KEY
from ..processes import halt_point
from ..quarantine import transient
from ..stats.writes import Increment
from ..store.connection import is_embedded
from .whole import inserted

log = logging.getLogger(__name__)
RACE_RETRIES = 5
# Documents per bulk_write: a 30,000-document flush built all its update operations at
# once (the largest share of an ingest's peak memory); each slice that is applied leaves
# the batch as before, so a failure keeps only the rest for the retry.
WRITE_SLICE = 5_000


@dataclass
class Batch:
    """One flush: its number, the ``$inc`` of each document (by collection and ``_id``),
    the hits they count, and the documents written whole before them (``before``:
    (collection, document) pairs, which ``save_whole`` replaces; a representation's
    idempotent side, such as the visitor sketches)."""

    seq: int
    docs: dict[tuple[str, str], Increment]
    hits: int
    before: list[tuple[str, dict]] = field(default_factory=list)
    attempts: int = 0


class GuardedWrites:
    """An engine's batches written under its guard ``_guard`` (``flushes.<id>``); the
    engine keeps ``db``, ``_stats``, ``quarantine``, the batch awaiting a retry
    (``_failed``) and its representation, ``counts`` (whose ``save_whole`` writes a
    batch's ``before``)."""

    def _set_aside(self, cause: Exception) -> None:
        """The failed batch's documents one at a time, under its own number (the guard
        is per document: one that took the batch is refused again, one that did not
        takes it once); those refused for their content are set aside. A store failure
        meanwhile stops it, the rest kept for the retry."""
        batch = self._failed
        if batch is None:
            return
        self._side_writes(batch)
        for key in list(batch.docs):
            try:
                self._write_alone(batch, key)
            except Exception as exc:
                if transient(exc):
                    raise
                doc = batch.docs.pop(key)
                self.quarantine.keep({"document": key[1], "inc": dict(doc.inc)}, exc,
                                     doc.inc.get("daily", doc.inc.get("hits", 0)))
        log.warning("a flush failed for its content (%s): %d documents set aside",
                    cause, self.quarantine.count)
        self._failed = None
        self._stats["flushes"] += 1
        self._stats["hits_written"] += batch.hits

    def _side_writes(self, batch: Batch) -> None:
        """The documents a batch writes whole before its counters (idempotent: each
        replaces one writer's own document); one refused for its content is set aside,
        the counters still written."""
        if not batch.before:
            return
        by_coll: dict[str, list[dict]] = {}
        for coll, doc in batch.before:
            by_coll.setdefault(coll, []).append(doc)
        for coll, docs in by_coll.items():
            try:
                self.counts.save_whole(self.db, coll, docs)
            except Exception as exc:
                if transient(exc):
                    raise
                for doc in docs:
                    try:
                        self.counts.save_whole(self.db, coll, [doc])
                    except Exception as one:
                        if transient(one):
                            raise
                        self.quarantine.keep({"document": doc["_id"], "collection": coll},
                                             one)
        batch.before = []

    def _write(self, batch: Batch) -> int:
        """Apply a batch; on failure drop from it what is known to be applied and raise."""
        self._side_writes(batch)
        by_collection: dict[str, list[tuple[str, str]]] = {}
        for key in batch.docs:
            by_collection.setdefault(key[0], []).append(key)
        started = time.perf_counter()
        batch.attempts += 1
        written = 0
        try:
            for coll, keys in by_collection.items():
                for at in range(0, len(keys), WRITE_SLICE):
                    written += self._write_collection(batch, coll, keys[at:at + WRITE_SLICE])
                halt_point(f"wrote {coll}")
        except PyMongoError as exc:
            self._stats["failures"] += 1
            self._stats["documents_written"] += written
            self._last_error = f"{type(exc).__name__}: {str(exc)[:200]}"
            raise
        self._failed = None
        self._last_latency = time.perf_counter() - started
        self._stats["flushes"] += 1
        self._stats["documents_written"] += written
        self._stats["hits_written"] += batch.hits
        return written

    def _write_collection(self, batch: Batch, coll: str, keys: list[tuple[str, str]]) -> int:
        """One unordered ``bulk_write``; documents it applied leave the batch (and count as
        written even when it raises). Returns how many. An unknown outcome (no
        BulkWriteError) leaves them all: the retry's guard sorts out which were applied.
        On the embedded store a document it does not hold is inserted whole
        (``whole``: one statement for them all, where each upsert is matched against
        nothing and built from its operators); one another writer inserted meanwhile
        (a duplicate key) is sent again as the guarded ``$inc``, which adds to it.
        A MongoDB server builds its upserts itself: they are sent as they are."""
        total = 0
        fresh = self._absent(coll, keys) if is_embedded(self.db) else set()
        for _ in range(RACE_RETRIES):
            self._stats["db_operations"] += len(keys)
            self._stats["round_trips"] += 1
            ops = [self._insert(batch.seq, key, batch.docs[key], fresh) if key in fresh
                   else self._update(batch.seq, key[1], batch.docs[key]) for key in keys]
            try:
                self.db[coll].bulk_write(ops, ordered=False)
                failed, raced = [], []
            except BulkWriteError as exc:
                if exc.details.get("writeConcernErrors"):
                    raise
                errors = exc.details["writeErrors"]
                failed = [keys[e["index"]] for e in errors if e.get("code") != DUPLICATE_KEY]
                duplicates = [keys[e["index"]] for e in errors if e.get("code") == DUPLICATE_KEY]
                lost = [key for key in duplicates if key in fresh]   # inserted by another
                fresh.difference_update(lost)
                raced = lost + self._not_applied(
                    coll, batch.seq, [key for key in duplicates if key not in lost])
                for key in set(keys) - set(failed) - set(raced):
                    del batch.docs[key]
                total += len(keys) - len(failed) - len(raced)
                if failed:
                    self._stats["documents_written"] += total
                    raise
                if raced:
                    keys = raced
                    continue
                return total
            for key in keys:
                del batch.docs[key]
            return total + len(keys)
        raise BulkWriteError({"writeErrors": [], "writeConcernErrors": [], "nInserted": 0,
                              "errmsg": f"{len(keys)} upserts kept racing other writers"})

    def _absent(self, coll: str, keys: list[tuple[str, str]]) -> set[tuple[str, str]]:
        """Those of ``keys`` whose document the embedded store does not hold, looked up
        by ``_id`` from the keys alone, a few hundred a statement (one statement for a
        whole slice kept ~11 MB more of SQLite's cached statements: long tail, 200,000
        lines)."""
        ids = [key[1] for key in keys]
        stored = {doc["_id"] for doc in bulk.find_by_ids(self.db[coll], ids, {"_id": 1})}
        return {key for key in keys if key[1] not in stored}

    def _insert(self, seq: int, key: tuple[str, str], doc: Increment,
                fresh: set) -> InsertOne | UpdateOne:
        """The whole document of a guarded upsert, as an insert (its update if it cannot
        be built whole: the upsert then answers as it does)."""
        whole = inserted(key[1], doc.inc, {self._guard: seq, **doc.sets}, doc.metadata)
        if whole is None:
            fresh.discard(key)
            return self._update(seq, key[1], doc)
        return InsertOne(whole)

    def _not_applied(self, coll: str, seq: int, keys: list[tuple[str, str]]) -> list:
        """Of documents whose upsert hit a duplicate key, those that do not hold this
        flush: another writer inserted them first, so the update must be sent again."""
        if not keys:
            return []
        ids = [key[1] for key in keys]
        applied = {doc["_id"] for doc in
                   self.db[coll].find({"_id": {"$in": ids}, self._guard: seq}, {"_id": 1})}
        return [key for key in keys if key[1] not in applied]

    def _update(self, seq: int, doc_id: str, doc: Increment) -> UpdateOne:
        return UpdateOne(
            {"_id": doc_id, self._guard: {"$ne": seq}},
            {"$inc": dict(doc.inc), "$set": {self._guard: seq, **doc.sets},
             "$setOnInsert": {"metadata": doc.metadata}},
            upsert=True,
        )

    def _write_alone(self, batch: Batch, key: tuple[str, str]) -> None:
        """One document of a batch; its fields no database can name (a value with a lone
        surrogate) are set aside first, so the rest of the document still counts."""
        inc = batch.docs[key].inc
        bad = {path: n for path, n in inc.items() if not _encodable(path)}
        if bad and len(bad) < len(inc):
            self.quarantine.keep({"document": key[1], "fields": bad},
                                 "field names that are not valid UTF-8")
            for path in bad:
                del inc[path]
        self._stats["documents_written"] += self._write_collection(batch, key[0], [key])


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
