"""HitRecorder: coalesce hits in memory, write one ``$inc`` upsert per document per flush.

Exactly-once across failures. Every flush is a *batch* with a unique token. Each of its
updates is guarded by the token::

    filter {_id, flushes: {$ne: token}}
    update {$inc: ..., $push: {flushes: {$each: [token], $slice: -16}}, $setOnInsert: ...}

so applying an update twice is impossible: the second attempt's filter no longer matches,
its upsert collides with the existing ``_id`` and fails with a duplicate-key error (11000),
which the recorder reads as "already applied". A batch that fails (in part, or with an
outcome unknown, as after a lost connection) is kept whole with its token and retried
with exponential backoff before any newer batch is written, so a document never sees more
than one newer token before the retry: the 16 tokens kept are ample. Increments are never
merged across batches, so a retry cannot smuggle new hits past the guard.
"""

from __future__ import annotations

import atexit
import datetime as dt
import logging
import signal
import threading
import time
import uuid
import weakref
from collections import Counter
from dataclasses import dataclass, field

from pymongo import UpdateOne
from pymongo.errors import BulkWriteError, PyMongoError

from . import schema, validation
from .errors import RecorderOverloadedError
from .writes import preallocate, targets

log = logging.getLogger(__name__)
KEEP_TOKENS = 16
DUPLICATE_KEY = 11000
PREALLOCATE_FROM_HOUR = 23
PREALLOCATE_PER_TICK = 50
MAX_ACTIVE_PAGES = 20_000


@dataclass
class _Doc:
    collection: str
    metadata: dict
    inc: Counter = field(default_factory=Counter)


@dataclass
class _Batch:
    token: str
    docs: dict[tuple[str, str], _Doc]
    hits: int
    attempts: int = 0


class HitRecorder:
    """Thread-safe hit counter in front of ``stats.daily`` and ``stats.monthly``.

    ``record`` only touches memory; a background thread flushes every ``flush_interval``
    seconds, as do ``flush()``, ``close()``, interpreter exit and SIGTERM. Past
    ``max_pending_docs`` pending documents ``record`` flushes in the caller's thread
    (backpressure); if the database cannot take them either, it raises
    :class:`RecorderOverloadedError` once twice that bound is pending, so memory stays
    bounded and the caller knows the hit was refused.
    """

    def __init__(self, db, flush_interval: float = 1.0, max_pending_docs: int = 10_000,
                 preallocate_next_day: bool = True, max_backoff: float = 30.0,
                 clock=None):
        self.db = db
        self.flush_interval = flush_interval
        self.max_pending_docs = max_pending_docs
        self.max_backoff = max_backoff
        self._preallocate = preallocate_next_day
        self._clock = clock or (lambda: dt.datetime.now(dt.UTC))
        self._lock = threading.Lock()
        self._flush_lock = threading.RLock()
        self._pending: dict[tuple[str, str], _Doc] = {}
        self._pending_hits = 0
        self._failed: _Batch | None = None
        self._seq = 0
        self._prefix = uuid.uuid4().hex[:10]
        self._active: dict[dt.datetime, set[tuple[str, str]]] = {}
        self._preallocated: set[tuple[dt.datetime, str, str]] = set()
        self._stats = Counter()
        self._last_latency = 0.0
        self._last_error = ""
        self._closed = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="hitboard-recorder", daemon=True)
        self._thread.start()
        _register(self)

    # -- recording -----------------------------------------------------------------
    def record(self, site: str, page: str, ts: dt.datetime | None = None, n: int = 1) -> None:
        if self._closed:
            raise RecorderOverloadedError("the recorder is closed")
        ts = self._clock() if ts is None else validation.timestamp(ts)
        site, page = validation.site(site), validation.page(page)
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise validation.InvalidRangeError(f"hit count must be a positive integer, got {n!r}")
        if len(self._pending) >= 2 * self.max_pending_docs:
            self._drain_or_refuse()
        day, month = schema.day_start(ts), schema.month_start(ts)
        with self._lock:
            for target in targets(site, page):
                self._add(schema.DAILY, schema.daily_id(day, site, target),
                          schema.metadata(day, site, target), schema.daily_increments(ts, n))
                self._add(schema.MONTHLY, schema.monthly_id(month, site, target),
                          schema.metadata(month, site, target), schema.monthly_increments(ts, n))
            self._pending_hits += n
            self._stats["hits_accepted"] += n
            active = self._active.setdefault(day, set())
            if len(active) < MAX_ACTIVE_PAGES:
                active.add((site, page))
            overfull = len(self._pending) >= self.max_pending_docs
        if overfull:
            self._stats["backpressure_flushes"] += 1
            self._try_flush()

    def _add(self, collection: str, doc_id: str, meta: dict, inc: dict) -> None:
        doc = self._pending.get((collection, doc_id))
        if doc is None:
            doc = self._pending[(collection, doc_id)] = _Doc(collection, meta)
        doc.inc.update(inc)

    def _drain_or_refuse(self) -> None:
        self._try_flush()
        if len(self._pending) >= 2 * self.max_pending_docs:
            self._stats["refused"] += 1
            raise RecorderOverloadedError(
                f"{len(self._pending)} documents are waiting for the database "
                f"({self._last_error or 'it is not keeping up'}); hit refused"
            )

    # -- flushing ------------------------------------------------------------------
    def flush(self) -> int:
        """Write everything pending; returns documents written. Raises the database's
        error if it fails; the increments are kept and retried."""
        with self._flush_lock:
            written = 0
            if self._failed is not None:
                written += self._write(self._failed)
            with self._lock:
                if not self._pending:
                    return written
                self._seq += 1
                batch = _Batch(f"{self._prefix}-{self._seq}", self._pending, self._pending_hits)
                self._pending, self._pending_hits = {}, 0
            self._failed = batch
            return written + self._write(batch)

    def _try_flush(self) -> bool:
        try:
            self.flush()
            return True
        except PyMongoError as exc:
            log.warning("hit flush failed, will retry: %s", exc)
            return False

    def _write(self, batch: _Batch) -> int:
        """Apply a batch; on failure keep the part not known to be applied and raise."""
        keys = list(batch.docs)
        ops = [self._update(batch.token, doc_id, batch.docs[(coll, doc_id)])
               for coll, doc_id in keys]
        by_collection: dict[str, list[int]] = {}
        for index, (coll, _) in enumerate(keys):
            by_collection.setdefault(coll, []).append(index)
        started = time.perf_counter()
        batch.attempts += 1
        applied: set[int] = set()
        try:
            for coll, indexes in by_collection.items():
                self._stats["db_operations"] += len(indexes)
                try:
                    self.db[coll].bulk_write([ops[i] for i in indexes], ordered=False)
                    applied.update(indexes)
                except BulkWriteError as exc:
                    failed = {indexes[e["index"]] for e in exc.details["writeErrors"]
                              if e.get("code") != DUPLICATE_KEY}
                    if exc.details.get("writeConcernErrors"):
                        raise
                    applied.update(set(indexes) - failed)
                    if failed:
                        raise
        except PyMongoError as exc:
            for index in applied:
                batch.docs.pop(keys[index])
            self._stats["failures"] += 1
            self._last_error = f"{type(exc).__name__}: {str(exc)[:200]}"
            raise
        self._failed = None
        self._last_latency = time.perf_counter() - started
        self._stats["flushes"] += 1
        self._stats["documents_written"] += len(keys)
        self._stats["hits_written"] += batch.hits
        return len(keys)

    @staticmethod
    def _update(token: str, doc_id: str, doc: _Doc) -> UpdateOne:
        return UpdateOne(
            {"_id": doc_id, schema.FLUSHES: {"$ne": token}},
            {"$inc": dict(doc.inc), "$setOnInsert": {"metadata": doc.metadata},
             "$push": {schema.FLUSHES: {"$each": [token], "$slice": -KEEP_TOKENS}}},
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
                attempts = self._failed.attempts if self._failed else 1
                delay = min(self.max_backoff, self.flush_interval * 2 ** min(attempts, 10))

    def _preallocate_tick(self) -> None:
        """Pre-allocate tomorrow's documents for today's active pages during the last UTC
        hour, a few per tick. A schedule rather than the seed's per-hit coin toss: the work
        is bounded, happens once per page, and is testable with an injected clock."""
        if not self._preallocate:
            return
        now = self._clock()
        if now.hour < PREALLOCATE_FROM_HOUR:
            return
        self.preallocate_next_day(now, limit=PREALLOCATE_PER_TICK)

    def preallocate_next_day(self, now: dt.datetime, limit: int | None = None) -> int:
        today = schema.day_start(now)
        tomorrow = today + dt.timedelta(days=1)
        with self._lock:
            todo = [(s, p) for s, p in self._active.get(today, ())
                    if (tomorrow, s, p) not in self._preallocated]
            for old in [d for d in self._active if d < today]:
                del self._active[old]
        done = 0
        for site, page in todo[:limit]:
            try:
                preallocate(self.db, tomorrow, site, page)
            except PyMongoError as exc:
                log.warning("pre-allocation failed: %s", exc)
                break
            self._preallocated.add((tomorrow, site, page))
            done += 1
        return done

    # -- reporting and lifecycle ---------------------------------------------------------
    def stats(self) -> dict:
        with self._lock:
            pending_docs, pending_hits = len(self._pending), self._pending_hits
        failed = self._failed
        if failed is not None:
            pending_docs += len(failed.docs)
            pending_hits += failed.hits
        return {
            "hits_accepted": self._stats["hits_accepted"],
            "hits_written": self._stats["hits_written"],
            "documents_written": self._stats["documents_written"],
            "flushes": self._stats["flushes"],
            "db_operations": self._stats["db_operations"],
            "failures": self._stats["failures"],
            "refused": self._stats["refused"],
            "backpressure_flushes": self._stats["backpressure_flushes"],
            "pending_documents": pending_docs,
            "pending_hits": pending_hits,
            "last_flush_latency_s": self._last_latency,
            "last_error": self._last_error,
        }

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
        leftover = self.stats()["pending_hits"]
        if leftover:
            log.error("%d hits could not be written before close: %s", leftover,
                      self._last_error)

    def __enter__(self) -> HitRecorder:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_LIVE: weakref.WeakSet[HitRecorder] = weakref.WeakSet()
_HANDLERS_INSTALLED = False


def _register(recorder: HitRecorder) -> None:
    """Flush every live recorder at interpreter exit and on SIGTERM (then defer to the
    previous SIGTERM handler, or exit with status 143 as the default one would)."""
    global _HANDLERS_INSTALLED
    _LIVE.add(recorder)
    if _HANDLERS_INSTALLED:
        return
    _HANDLERS_INSTALLED = True
    atexit.register(close_all)
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGTERM)

    def on_sigterm(signum, frame):
        close_all()
        if callable(previous):
            previous(signum, frame)
        elif previous != signal.SIG_IGN:
            raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_sigterm)


def close_all() -> None:
    for recorder in list(_LIVE):
        recorder.close()
