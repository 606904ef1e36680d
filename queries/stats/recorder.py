"""HitRecorder: coalesce hits in memory, write one ``$inc`` upsert per document per flush.

Exactly-once across failures. Each recorder has a unique id R and numbers its flushes
1, 2, 3...; every update of flush S is guarded by that number::

    filter {_id, flushes.R: {$ne: S}}
    update {$inc: ..., $set: {flushes.R: S}, $setOnInsert: {metadata}}

so a document that already took flush S cannot take it again: the filter no longer
matches, the upsert collides with the existing ``_id`` and fails with a duplicate-key
error (11000). A failed flush (in part, or with an unknown outcome, as after a lost
connection) is kept whole with its number and retried with exponential backoff *before*
any newer flush is written, so R's flushes reach each document in order and the one
number kept per recorder suffices, however many other recorders (processes) write the
same documents. Increments are never merged across flushes, so a retry cannot carry new
hits past the guard. A duplicate-key error is read as "already applied" only after
checking the document holds ``flushes.R == S``; otherwise another writer created the
document between our filter and our insert (MongoDB does not retry such upserts), and
the update is sent again.

R may instead be a stable ``writer`` id whose flushes span processes (ingest: one per log
file). Its owner numbers each batch (``flush(seq)``, numbers kept in its checkpoint) and
after a crash re-sends the interrupted batch, same number and increments, before any newer
one, so the argument holds across processes. Its timer and backpressure only retry a
failed batch, and exit and SIGTERM are left to the owner (it flushes, or reads again).
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

from pymongo import UpdateOne
from pymongo.errors import BulkWriteError, PyMongoError

from .. import validation
from ..errors import DUPLICATE_KEY, HitboardError, RecorderOverloadedError
from . import exithooks, schema
from .nextday import MAX_ACTIVE_PAGES, NextDay
from .writes import Increment, RecorderStatus, day_unit, increments, targets

log = logging.getLogger(__name__)
RACE_RETRIES = 5
RECORD_ATTEMPTS = 3
WRITER_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")  # becomes a field name: flushes.<writer>


def _add_minute(units: dict[tuple, dict[int, int]], key: tuple, minute: int, n: int) -> None:
    minutes = units.get(key)
    if minutes is None:
        minutes = units[key] = {}
    minutes[minute] = minutes.get(minute, 0) + n


@dataclass
class _Batch:
    seq: int
    docs: dict[tuple[str, str], Increment]
    hits: int
    attempts: int = 0


class HitRecorder:
    """Thread-safe hit counter in front of ``stats.daily`` and ``stats.monthly``.

    ``record`` only touches memory; a background thread flushes every ``flush_interval``
    seconds, as do ``flush()``, ``close()``, interpreter exit and SIGTERM. Past
    ``max_pending_docs`` pending documents ``record`` flushes in the caller's thread
    (backpressure), except while a failed flush waits for its backoff; once twice that
    bound is pending and the database cannot take them, it raises
    :class:`RecorderOverloadedError`, so memory stays bounded and the caller knows the
    hit was refused. ``status().db_operations`` counts update statements sent,
    ``round_trips`` the ``bulk_write`` calls carrying them.
    """

    def __init__(self, db, flush_interval: float = 1.0, max_pending_docs: int = 10_000,
                 preallocate_next_day: bool = True, max_backoff: float = 30.0,
                 clock=None, writer: str | None = None):
        if writer is not None and not WRITER_ID.fullmatch(writer):
            raise HitboardError(f"invalid writer id {writer!r}: 1-64 of A-Z a-z 0-9 _ -")
        self.db = db
        self.flush_interval = flush_interval
        self.max_pending_docs = max_pending_docs
        self.max_backoff = max_backoff
        self._preallocate = preallocate_next_day
        self._clock = clock or (lambda: dt.datetime.now(dt.UTC))
        # Re-entrant: the SIGTERM handler may flush while this thread is inside record().
        self._lock = threading.RLock()
        self._flush_lock = threading.RLock()
        # (site, page, year, month, day) -> {minute of the UTC day: hits}; the documents
        # are derived at flush time, which keeps record() to a few dictionary operations.
        self._pending: dict[tuple, dict[int, int]] = {}
        self._pending_docs: set[tuple] = set()
        self._pending_bots: dict[tuple, dict[int, int]] = {}    # the bot hits among them
        self._names: dict[tuple[str, str], tuple[str, str]] = {}
        self._pending_hits = 0
        self._failed: _Batch | None = None
        self._retry_at, self._seq, self._writer = 0.0, 0, writer
        self._guard = f"{schema.FLUSHES}.{writer or uuid.uuid4().hex[:12]}"
        self._tomorrow = NextDay(db, self._lock)
        self._stats = Counter()
        self._last_latency, self._last_error, self._closed = 0.0, "", False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="hitboard-recorder", daemon=True)
        self._thread.start()
        if writer is None:
            exithooks.register(self)

    # -- recording -----------------------------------------------------------------
    def record(self, site: str, page: str, ts: dt.datetime | None = None, n: int = 1,
               bots: int = 0) -> None:
        """Count ``n`` hits, ``bots`` of them by bots; only memory is touched (the hot
        path of every request)."""
        if self._closed:
            raise RecorderOverloadedError("the recorder is closed")
        if ts is None or type(ts) is not dt.datetime or ts.tzinfo is not dt.UTC:
            ts = validation.timestamp(self._clock() if ts is None else ts)
        if type(n) is not int or n < 1:
            raise validation.InvalidRangeError(f"hit count must be a positive integer, got {n!r}")
        if bots and (type(bots) is not int or not 0 <= bots <= n):
            raise validation.InvalidRangeError(f"bot hits must be 0 to {n}, got {bots!r}")
        names = self._names.get((site, page)) or self._validate(site, page)
        key, minute = day_unit(names, ts)
        with self._lock:
            # The usual case, a unit already open with room to spare: what _admit does
            # for it, without its loop and closure.
            minutes = self._pending.get(key)
            if minutes is not None and len(self._pending_docs) < self.max_pending_docs:
                minutes[minute] = minutes.get(minute, 0) + n
                if bots:
                    _add_minute(self._pending_bots, key, minute, bots)
                self._pending_hits += n
                self._stats["hits_accepted"] += n
                return

        def add(minutes: dict[int, int]) -> None:
            minutes[minute] = minutes.get(minute, 0) + n
            if bots:
                _add_minute(self._pending_bots, key, minute, bots)

        self._admit(key, n, add)

    def add_pending(self, pending: dict, bots: dict | None = None) -> None:
        """Count hits tallied apart from this recorder, in its pending format (ingest's
        worker processes parse lines: ``queries.ingest.mapper``), with ``record``'s bounds;
        ``bots``: the bot hits among them, in the same format."""
        if self._closed:
            raise RecorderOverloadedError("the recorder is closed")
        bots = bots or {}
        for key, part in pending.items():
            self._admit(key, self._unit_hits(part),
                        lambda unit, key=key, part=part: self._merge_unit(
                            unit, part, key, bots.get(key)))

    @staticmethod
    def _unit_hits(part: dict[int, int]) -> int:
        return sum(part.values())

    def _merge_unit(self, unit: dict[int, int], part: dict[int, int], key: tuple,
                    bot_part: dict[int, int] | None) -> None:
        """Add a tallied unit and its bot hits (under the lock: one flush takes both)."""
        for minute, n in part.items():
            unit[minute] = unit.get(minute, 0) + n
        for minute, n in (bot_part or {}).items():
            _add_minute(self._pending_bots, key, minute, n)

    def _admit(self, key: tuple, n: int, add) -> None:
        """Count ``n`` hits into the pending unit ``key`` (``add(unit)`` does it, under the
        lock; ``_open_unit`` starts a new unit). Memory stays bounded: with twice
        ``max_pending_docs`` outstanding a new unit waits for a flush in flight, then is
        refused; past ``max_pending_docs`` the caller flushes (backpressure)."""
        with self._lock:                # the usual case: the unit is open, room to spare
            unit = self._pending.get(key)
            if unit is not None and len(self._pending_docs) < self.max_pending_docs:
                add(unit)
                self._pending_hits += n
                self._stats["hits_accepted"] += n
                return
        for attempt in range(RECORD_ATTEMPTS):
            with self._lock:
                unit = self._pending.get(key)
                full = unit is None and self._outstanding() >= 2 * self.max_pending_docs
                if not full:
                    add(unit if unit is not None else self._open_unit(key))
                    self._pending_hits += n
                    self._stats["hits_accepted"] += n
                    overfull = len(self._pending_docs) >= self.max_pending_docs
                    break
            # Full, checked under the lock so concurrent callers cannot overshoot: drain
            # (waiting for a flush in flight) and try again; refuse if the database won't.
            if attempt == RECORD_ATTEMPTS - 1:
                self._refuse()
            self._drain_or_refuse()
        if overfull and self._may_flush_now():
            self._stats["backpressure_flushes"] += 1
            self._try_flush()

    def _validate(self, site: str, page: str) -> tuple[str, str]:
        names = validation.site(site), validation.page(page)
        if len(self._names) >= MAX_ACTIVE_PAGES:
            self._names.clear()
        self._names[(site, page)] = names
        return names

    def _open_unit(self, key: tuple) -> dict[int, int]:
        """Start counting a (site, page, UTC day): note the documents it will touch."""
        site, page, year, month, day = key
        for target in targets(page):
            self._pending_docs.add((schema.DAILY, site, target, year, month, day))
            self._pending_docs.add((schema.MONTHLY, site, target, year, month))
        self._tomorrow.note(dt.datetime(year, month, day, tzinfo=dt.UTC), site, page)
        return self._pending.setdefault(key, {})

    def _documents(self, pending: dict, bots: dict) -> dict[tuple[str, str], Increment]:
        """The documents a flush writes (the dimension recorder counts other ones)."""
        return increments(pending, bots)

    def _may_flush_now(self) -> bool:
        """False while a failed flush waits for its backoff: don't hammer a database down."""
        return time.monotonic() >= self._retry_at

    def _outstanding(self) -> int:
        """Documents held in memory: pending ones and those of a flush awaiting retry."""
        failed = self._failed
        return len(self._pending_docs) + (len(failed.docs) if failed is not None else 0)

    def _drain_or_refuse(self) -> None:
        if self._may_flush_now():
            self._try_flush()
        if self._outstanding() >= 2 * self.max_pending_docs:
            self._refuse()

    def _refuse(self) -> None:
        self._stats["refused"] += 1
        raise RecorderOverloadedError(
            f"{self._outstanding()} documents are waiting for the database "
            f"({self._last_error or 'it is not keeping up'}); hit refused"
        )

    # -- flushing ------------------------------------------------------------------
    def flush(self, seq: int | None = None,
              writing: Callable[[], AbstractContextManager] = nullcontext) -> int:
        """Write everything pending; returns documents written. Raises the database's
        error if it fails; the increments are kept and retried. ``seq`` numbers the new
        batch and must exceed every number used before (a failed batch, retried first,
        keeps its own); with a ``writer`` id only a numbered flush starts a batch.
        ``writing()`` is entered around each batch's writes, not while its documents
        are computed (``queries.store.connection.atomic``: one turn of the embedded
        store's write lock, which other writers need meanwhile)."""
        with self._flush_lock:
            if seq is not None and seq <= self._seq:
                raise validation.InvalidRangeError(
                    f"flush number {seq} must exceed the last one used, {self._seq}")
            written = 0
            if self._failed is not None:
                with writing():
                    written += self._write(self._failed)
            with self._lock:
                if not self._pending or (seq is None and self._writer is not None):
                    return written
                self._seq = self._seq + 1 if seq is None else seq
                pending, bots, hits = self._pending, self._pending_bots, self._pending_hits
                self._pending, self._pending_hits, self._pending_docs = {}, 0, set()
                self._pending_bots = {}
            batch = _Batch(self._seq, self._documents(pending, bots), hits)
            self._failed = batch
            with writing():
                return written + self._write(batch)

    def _try_flush(self) -> bool:
        try:
            self.flush()
        except PyMongoError as exc:
            attempts = self._failed.attempts if self._failed else 1
            delay = min(self.max_backoff, self.flush_interval * 2 ** min(attempts, 10))
            self._retry_at = time.monotonic() + delay
            log.warning("hit flush failed, retrying in %.1fs: %s", delay, exc)
            return False
        self._retry_at = 0.0
        return True

    def _write(self, batch: _Batch) -> int:
        """Apply a batch; on failure drop from it what is known to be applied and raise."""
        by_collection: dict[str, list[tuple[str, str]]] = {}
        for key in batch.docs:
            by_collection.setdefault(key[0], []).append(key)
        started = time.perf_counter()
        batch.attempts += 1
        written = 0
        try:
            for coll, keys in by_collection.items():
                written += self._write_collection(batch, coll, keys)
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

    def _write_collection(self, batch: _Batch, coll: str, keys: list[tuple[str, str]]) -> int:
        """One unordered ``bulk_write``; documents it applied leave the batch (and count as
        written even when it raises). Returns how many. An unknown outcome (no
        BulkWriteError) leaves them all: the retry's guard sorts out which were applied."""
        total = 0
        for _ in range(RACE_RETRIES):
            self._stats["db_operations"] += len(keys)
            self._stats["round_trips"] += 1
            ops = [self._update(batch.seq, key[1], batch.docs[key]) for key in keys]
            try:
                self.db[coll].bulk_write(ops, ordered=False)
                failed, raced = [], []
            except BulkWriteError as exc:
                if exc.details.get("writeConcernErrors"):
                    raise
                errors = exc.details["writeErrors"]
                failed = [keys[e["index"]] for e in errors if e.get("code") != DUPLICATE_KEY]
                duplicates = [keys[e["index"]] for e in errors if e.get("code") == DUPLICATE_KEY]
                raced = self._not_applied(coll, batch.seq, duplicates)
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
            {"$inc": dict(doc.inc), "$set": {self._guard: seq},
             "$setOnInsert": {"metadata": doc.metadata}},
            upsert=True,
        )

    # -- background work -------------------------------------------------------------
    def _run(self) -> None:
        delay = self.flush_interval
        while not self._stop.wait(delay):
            if self._try_flush():
                delay = self.flush_interval
                self._preallocate_tick()
            else:
                delay = max(0.0, self._retry_at - time.monotonic())

    def _preallocate_tick(self) -> None:
        if self._preallocate:
            self._tomorrow.tick(self._clock())

    def preallocate_next_day(self, now: dt.datetime, limit: int | None = None) -> int:
        """Pre-allocate tomorrow's documents of the pages active on ``now``'s UTC day."""
        return self._tomorrow.preallocate(now, limit)

    # -- reporting and lifecycle ---------------------------------------------------------
    def status(self) -> RecorderStatus:
        with self._lock:
            pending_docs, pending_hits = len(self._pending_docs), self._pending_hits
        failed = self._failed
        if failed is not None:
            pending_docs += len(failed.docs)
            pending_hits += failed.hits
        counts = {name: self._stats[name] for name in (
            "hits_accepted", "hits_written", "documents_written", "flushes", "db_operations",
            "round_trips", "failures", "refused", "backpressure_flushes")}
        return RecorderStatus(**counts, pending_documents=pending_docs,
                              pending_hits=pending_hits,
                              last_flush_latency_s=self._last_latency,
                              last_error=self._last_error)

    def close(self, timeout: float = 10.0) -> None:
        """Stop the thread and flush, retrying until ``timeout``; hits that still cannot
        be written are reported in the log, never dropped silently."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)
        deadline = time.monotonic() + timeout
        delay = 0.05
        while not self._try_flush() and time.monotonic() < deadline:
            time.sleep(delay)
            delay = min(delay * 2, 1.0)
        leftover = self.status().pending_hits
        if leftover:
            log.error("%d hits could not be written before close: %s", leftover,
                      self._last_error)

    def __enter__(self) -> HitRecorder:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
