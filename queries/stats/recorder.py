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

from .. import validation
from ..errors import HitboardError, RecorderOverloadedError
from ..quarantine import Quarantine, transient
from . import exithooks, schema
from .guarded import Batch, GuardedWrites
from .nextday import MAX_ACTIVE_PAGES, NextDay
from .writes import Increment, RecorderStatus, day_unit, increments, targets

log = logging.getLogger(__name__)
RECORD_ATTEMPTS = 3
WRITER_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")  # becomes a field name: flushes.<writer>


def _add_minute(units: dict[tuple, dict[int, int]], key: tuple, minute: int, n: int) -> None:
    minutes = units.get(key)
    if minutes is None:
        minutes = units[key] = {}
    minutes[minute] = minutes.get(minute, 0) + n


class HitRecorder(GuardedWrites):
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
        self._preparing = 0       # hits of a batch whose documents are being computed
        self._failed: Batch | None = None
        self._retry_at, self._seq, self._writer = 0.0, 0, writer
        self._guard = f"{schema.FLUSHES}.{writer or uuid.uuid4().hex[:12]}"
        self._tomorrow = NextDay(db, self._lock)
        self._stats = Counter()
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
        store's write lock, which other writers need meanwhile). The last number again,
        while its batch failed, writes that batch alone (an owner retrying it)."""
        with self._flush_lock:
            retrying = (seq is not None and seq == self._seq and self._failed is not None
                        and self._failed.seq == seq)
            if seq is not None and seq <= self._seq and not retrying:
                raise validation.InvalidRangeError(
                    f"flush number {seq} must exceed the last one used, {self._seq}")
            written = 0
            if self._failed is not None:
                with writing():
                    written += self._write(self._failed)
            if retrying:                  # the numbered batch again, nothing newer with it
                return written
            with self._lock:
                if not self._pending or (seq is None and self._writer is not None):
                    return written
                self._seq = self._seq + 1 if seq is None else seq
                pending, bots, hits = self._pending, self._pending_bots, self._pending_hits
                self._pending, self._pending_hits, self._pending_docs = {}, 0, set()
                self._pending_bots, self._preparing = {}, hits
            batch = Batch(self._seq, self._documents(pending, bots), hits)
            with self._lock:
                self._failed, self._preparing = batch, 0
            with writing():
                return written + self._write(batch)

    def _try_flush(self) -> bool:
        """Flush; a store failure waits for a retry with backoff, a batch failing for
        its content is written document by document and what still fails set aside
        (``queries.quarantine``). Never raises: the recorder's thread calls it."""
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
                try:
                    self._preallocate_tick()
                except Exception:              # tomorrow's documents are an optimisation
                    log.exception("pre-allocation failed")
            else:
                delay = max(0.0, self._retry_at - time.monotonic())

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
        """What keeps this recorder from counting as it should, for ``/healthz``."""
        found = []
        if not self._closed and not self._thread.is_alive():
            found.append(f"{type(self).__name__}: its flush thread is down")
        if self._outstanding() >= self.max_pending_docs:
            found.append(f"{type(self).__name__}: {self._outstanding():,} documents wait "
                         f"for the database ({self._last_error or 'not keeping up'})")
        return found

    def _preallocate_tick(self) -> None:
        if self._preallocate:
            self._tomorrow.tick(self._clock())

    def preallocate_next_day(self, now: dt.datetime, limit: int | None = None) -> int:
        """Pre-allocate tomorrow's documents of the pages active on ``now``'s UTC day."""
        return self._tomorrow.preallocate(now, limit)

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
