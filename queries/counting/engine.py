"""CountEngine: coalesce counts in memory, write one ``$inc`` upsert per document per flush;
what it counts and into which documents is its representation's (``counts``: the
pre-aggregated stats in ``queries.stats.counts``, the dimension counters and visitor
sketches in ``queries.dimensions.counters``).

Exactly-once across failures. Each engine has a unique id R and numbers its flushes
1, 2, 3...; every update of flush S is guarded by that number::

    filter {_id, flushes.R: {$ne: S}}
    update {$inc: ..., $set: {flushes.R: S}, $setOnInsert: {metadata}}

so a document that already took flush S cannot take it again: the filter no longer
matches, the upsert collides with the existing ``_id`` and fails with a duplicate-key
error (11000). A failed flush (in part, or with an unknown outcome, as after a lost
connection) is kept whole with its number and retried with exponential backoff *before*
any newer flush is written, so R's flushes reach each document in order and the one
number kept per engine suffices, however many other engines (processes) write the
same documents. Increments are never merged across flushes, so a retry cannot carry new
counts past the guard. A duplicate-key error is read as "already applied" only after
checking the document holds ``flushes.R == S``; otherwise another writer created the
document between our filter and our insert (MongoDB does not retry such upserts), and
the update is sent again.

R may instead be a stable ``writer`` id whose flushes span processes (ingest: one per log
file). Its owner numbers each batch (``flush(seq)``, numbers kept in its checkpoint) and
after a crash re-sends the interrupted batch, same number and increments, before any newer
one, so the argument holds across processes. Its timer and backpressure only retry a
failed batch, and exit and SIGTERM are left to the owner (it flushes, or reads again).

A representation (``Counts``) says what a pending *unit* is (stats: a page's UTC day of
minutes; dimensions: a site's UTC hour of value tuples) and turns a flush's units into
documents; the engine owns everything else: admission, backpressure, the flush thread,
the guard, retries and what is set aside.
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
from typing import Any

from .. import validation
from ..errors import HitboardError, RecorderOverloadedError
from ..quarantine import Quarantine, transient
from ..stats import schema
from ..stats.nextday import MAX_ACTIVE_PAGES
from ..stats.writes import RecorderStatus
from . import exithooks
from .guarded import Batch, GuardedWrites
from .representation import Counts

log = logging.getLogger(__name__)
RECORD_ATTEMPTS = 3
# The engine's guard is the field flushes.<id>: never digits only, which a path reads as an
# array index. mongoeco's SQLite engine does (json path $.flushes[123]): it never finds
# flushes.123 in a document, so the guard's $ne matched one that had taken the flush.
WRITER_ID = re.compile(r"(?![0-9]+$)[A-Za-z0-9_-]{1,64}")


class CountEngine(GuardedWrites):
    """Thread-safe counter in front of the documents of ``counts``.

    Counting (``_count``, ``_add_units``) only touches memory; a background thread
    flushes every ``flush_interval`` seconds, as do ``flush()``, ``close()``,
    interpreter exit and SIGTERM. Past ``max_pending_docs`` pending documents counting
    flushes in the caller's thread (backpressure), except while a failed flush waits for
    its backoff; once twice that bound is pending and the database cannot take them, it
    raises :class:`RecorderOverloadedError`, so memory stays bounded and the caller
    knows the hit was refused. ``status().db_operations`` counts update statements sent,
    ``round_trips`` the ``bulk_write`` calls carrying them.
    """

    def __init__(self, db, counts: Counts, flush_interval: float = 1.0,
                 max_pending_docs: int = 10_000, max_backoff: float = 30.0,
                 clock=None, writer: str | None = None):
        if writer is not None and not WRITER_ID.fullmatch(writer):
            raise HitboardError(f"invalid writer id {writer!r}: 1-64 of A-Z a-z 0-9 _ -, "
                                "not digits only")
        self.db = db
        self.counts = counts
        self._add = counts.add          # bound once: the hot path calls it for every hit
        self.flush_interval = flush_interval
        self.max_pending_docs = max_pending_docs
        self.max_backoff = max_backoff
        self._clock = clock or (lambda: dt.datetime.now(dt.UTC))
        # Re-entrant: the SIGTERM handler may flush while this thread is inside _count().
        self._lock = threading.RLock()
        self._flush_lock = threading.RLock()
        self._pending: dict[tuple, Any] = {}        # unit key -> the representation's unit
        self._pending_docs: set[tuple] = set()
        self._names: dict[tuple[str, str], tuple[str, str]] = {}
        self._pending_hits = 0
        self._preparing = 0       # hits of a batch whose documents are being computed
        self._failed: Batch | None = None
        self._retry_at, self._seq, self._writer = 0.0, 0, writer
        self._guard = f"{schema.FLUSHES}.{writer or 'p' + uuid.uuid4().hex[:12]}"
        self._stats = Counter()
        self._accepted = 0      # hits taken (an int, not in _stats: counted on every hit)
        self._last_latency, self._last_error, self._closed = 0.0, "", False
        self.quarantine = Quarantine(db, type(self).__name__)
        self.restarts = 0
        self._stop = threading.Event()
        self._thread = self._start_thread()
        if writer is None:
            exithooks.register(self)

    def _start_thread(self) -> threading.Thread:
        thread = threading.Thread(target=self._run, name="hitboard-recorder", daemon=True)
        thread.start()
        return thread

    # -- counting ------------------------------------------------------------------
    def _count(self, key: tuple, payload, n: int) -> None:
        """Count ``n`` hits of ``payload`` into the unit ``key``: a few dictionary
        operations in the usual case (the hot path of every request). Memory stays
        bounded: with twice ``max_pending_docs`` outstanding a new unit waits for a
        flush in flight, then is refused; past ``max_pending_docs`` the caller flushes
        (backpressure)."""
        if self._closed:
            raise RecorderOverloadedError("the recorder is closed")
        with self._lock:                # the usual case: the unit is open, room to spare
            unit = self._pending.get(key)
            if unit is not None and len(self._pending_docs) < self.max_pending_docs:
                self._add(unit, payload, n)
                self._pending_hits += n
                self._accepted += n
                return
        self._admit(key, n, lambda unit: self._add(unit, payload, n))

    def _add_units(self, units: dict) -> None:
        """Count units counted apart from the engine, in its pending format (ingest's
        worker processes, a backfill's day), with ``_count``'s bounds."""
        if self._closed:
            raise RecorderOverloadedError("the recorder is closed")
        for key, part in units.items():
            self._admit(key, self.counts.hits(part),
                        lambda unit, part=part: self.counts.merge(unit, part))

    def _admit(self, key: tuple, n: int, add: Callable[[Any], None]) -> None:
        """``_count``'s slow path: the unit is new, or a flush is called for."""
        for attempt in range(RECORD_ATTEMPTS):
            with self._lock:
                unit = self._pending.get(key)
                full = unit is None and self._outstanding() >= 2 * self.max_pending_docs
                if not full:
                    add(unit if unit is not None else self._open_unit(key))
                    self._pending_hits += n
                    self._accepted += n
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

    def _open_unit(self, key: tuple):
        unit, touched = self.counts.open(key)
        self._pending_docs.update(touched)
        self._pending[key] = unit
        return unit

    def _valid_names(self, site: str, page: str) -> tuple[str, str]:
        """``(site, page)`` validated, remembered for the next hits of the page."""
        names = self._names.get((site, page))
        if names is None:
            names = validation.site(site), validation.page(page)
            if len(self._names) >= MAX_ACTIVE_PAGES:
                self._names.clear()
            self._names[(site, page)] = names
        return names

    def _utc(self, ts) -> dt.datetime:
        """A hit's instant: now if None, else checked and in UTC."""
        if ts is None or type(ts) is not dt.datetime or ts.tzinfo is not dt.UTC:
            ts = validation.timestamp(self._clock() if ts is None else ts)
        return ts

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
        store's write lock, which other writers need meanwhile). The last number again,
        while its batch failed, writes that batch alone (an owner retrying it); once it
        is written, with nothing new pending, writes nothing."""
        with self._flush_lock:
            # The last number again: its batch is retried alone, or, written already
            # and nothing new taken since, skipped (an owner retrying a flush of several
            # recorders, another of which failed).
            retrying = seq is not None and seq == self._seq and (
                self._failed.seq == seq if self._failed is not None else not self._pending)
            if seq is not None and seq <= self._seq and not retrying:
                raise validation.InvalidRangeError(
                    f"flush number {seq} must exceed the last one used, {self._seq}")
            written = 0
            if self._failed is not None:
                written += self._write_within(writing, self._failed)
            if retrying:                  # the numbered batch again, nothing newer with it
                return written
            with self._lock:
                if not self._pending or (seq is None and self._writer is not None):
                    return written
                self._seq = self._seq + 1 if seq is None else seq
                pending, hits = self._pending, self._pending_hits
                self._pending, self._pending_hits, self._pending_docs = {}, 0, set()
                self._preparing = hits
            docs, before = self._documents(pending)
            batch = Batch(self._seq, docs, hits, before)
            with self._lock:
                self._failed, self._preparing = batch, 0
            return written + self._write_within(writing, batch)

    def _write_within(self, writing: Callable[[], AbstractContextManager], batch: Batch) -> int:
        """``_write`` inside ``writing()``. A given one is a transaction that a failure
        (of a write, or of its commit) rolls back whole: the batch is then kept whole
        for the retry, not less what its writes had applied; its documents that took it
        after all are skipped by the guard."""
        if writing is nullcontext:
            with writing():
                return self._write(batch)
        docs, before = dict(batch.docs), list(batch.before)
        try:
            with writing():
                return self._write(batch)
        except BaseException:
            batch.docs, batch.before = docs, before
            self._failed = batch
            raise

    def write_batch(self, seq: int,
                    writing: Callable[[], AbstractContextManager] = nullcontext) -> int:
        """Batch ``seq`` written, whatever happened to it before: begun from what is
        pending, sent again if it failed, nothing if it is written already (an owner
        resuming its batch after a failure of any of its steps); ``flush``'s errors."""
        with self._flush_lock:
            if seq < self._seq or (seq == self._seq and self._failed is None):
                return 0
            return self.flush(seq, writing)

    def _documents(self, pending: dict) -> tuple[dict, list]:
        """The documents a flush writes: the representation's."""
        return self.counts.documents(pending)

    def _try_flush(self) -> bool:
        """Flush; a store failure waits for a retry with backoff, a batch failing for
        its content is written document by document and what still fails set aside
        (``queries.quarantine``). Never raises: the engine's thread calls it."""
        try:
            try:
                self.flush()
            except Exception as exc:
                if transient(exc):
                    raise
                self._set_aside(exc)
        except Exception as exc:
            if not transient(exc):
                log.exception("hit flush failed")
            attempts = self._failed.attempts if self._failed else 1
            delay = min(self.max_backoff, self.flush_interval * 2 ** min(attempts, 10))
            self._retry_at = time.monotonic() + delay
            self._last_error = f"{type(exc).__name__}: {str(exc)[:200]}"
            log.warning("hit flush failed, retrying in %.1fs: %s", delay, exc)
            return False
        self._retry_at = 0.0
        return True

    # -- background work -------------------------------------------------------------
    def _run(self) -> None:
        delay = self.flush_interval
        while not self._stop.wait(delay):
            if self._try_flush():
                delay = self.flush_interval
                self._tick()
            else:
                delay = max(0.0, self._retry_at - time.monotonic())

    def _tick(self) -> None:
        """The representation's periodic work; an optimisation, never fatal."""
        try:
            self.counts.tick(self._clock())
        except Exception:
            log.exception("the %s's periodic work failed", type(self).__name__)

    def revive(self) -> bool:
        """Start the flush thread again if it stopped (it never should); True if it did."""
        if self._closed or self._thread.is_alive():
            return False
        self.restarts += 1
        log.error("the %s's flush thread had stopped: started again", type(self).__name__)
        self._thread = self._start_thread()
        return True

    def accepting(self) -> bool:
        """Whether a hit recorded now would be taken (not refused as overloaded)."""
        return not self._closed and self._outstanding() < 2 * self.max_pending_docs

    def problems(self) -> list[str]:
        """What keeps this engine from counting as it should, for ``/healthz``."""
        found = []
        if not self._closed and not self._thread.is_alive():
            found.append(f"{type(self).__name__}: its flush thread is down")
        if self._outstanding() >= self.max_pending_docs:
            found.append(f"{type(self).__name__}: {self._outstanding():,} documents wait "
                         f"for the database ({self._last_error or 'not keeping up'})")
        return found

    # -- reporting and lifecycle ---------------------------------------------------------
    def status(self) -> RecorderStatus:
        with self._lock:
            pending_docs = len(self._pending_docs)
            pending_hits = self._pending_hits + self._preparing
            failed = self._failed
        if failed is not None:
            pending_docs += len(failed.docs)
            pending_hits += failed.hits
        counts = {name: self._stats[name] for name in (
            "hits_written", "documents_written", "flushes", "db_operations",
            "round_trips", "failures", "refused", "backpressure_flushes")}
        counts["hits_accepted"] = self._accepted
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

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
