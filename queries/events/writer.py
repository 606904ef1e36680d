"""``EventWriter``: raw events buffered and written with unordered ``insert_many``, into
``events.buckets`` (``buckets.pack``) or another raw collection given its packer (the
custom events, the hits kept apart). See ``collection`` for what the events are and how
long they stay.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

from bson import ObjectId
from pymongo.errors import BulkWriteError, PyMongoError
from pymongo.write_concern import WriteConcern

from ..errors import DUPLICATE_KEY, HitboardError, RecorderOverloadedError
from ..quarantine import Quarantine, transient
from ..stats import schema
from . import buckets

log = logging.getLogger(__name__)
WRITE_CONCERNS = ("0", "1", "majority")
# A log line's fields (``queries.ingest.logformat.LogRecord``) stored as events' columns.
LOG_FIELDS = ("host", "method", "path", "query", "status", "bytes", "referrer", "user_agent")


def write_concern(value: str | int | None) -> WriteConcern | None:
    if value is None:
        return None
    text = str(value)
    if text not in WRITE_CONCERNS:
        raise HitboardError(f"invalid write concern {value!r}: use 0, 1 or majority")
    return WriteConcern(w=text if text == "majority" else int(text))


@dataclass
class EventTotals:
    written: int = 0          # acknowledged inserts
    unacknowledged: int = 0   # sent with w=0: the server does not say
    present: int = 0          # keyed events already stored (a batch written again)
    failed: int = 0
    errors: list[str] = field(default_factory=list)


def stamped(docs: list[dict], now: dt.datetime) -> list[dict]:
    """``docs`` stamped ``ingested`` at this attempt to write them: a write that succeeds
    after a store outage longer than the rollups' SETTLE must not carry the instant of its
    first try, or a rollup run that has moved past that instant meanwhile misses it."""
    for doc in docs:
        doc["ingested"] = now
    return docs


def store_once(collection, docs: list[dict], quarantine: Quarantine) -> set[int]:
    """Insert documents whose ``_id`` is fixed, so that sending them again stores each
    once: one already there answers a duplicate key and counts as stored. Returns the
    indexes of those refused for their content, set aside; a store failure raises, to
    send them all again."""
    try:
        collection.insert_many(docs, ordered=False)
    except BulkWriteError as exc:
        errors = exc.details.get("writeErrors", [])
        refused = {e["index"] for e in errors if e.get("code") != DUPLICATE_KEY}
        if exc.details.get("writeConcernErrors") or (refused and transient(exc)):
            raise
        for i in refused:
            quarantine.keep({"bucket": docs[i]["_id"]}, exc, docs[i].get("n", 1))
        return refused
    return set()


class EventWriter:
    """Buffers events and writes them with unordered ``insert_many``: one round trip per
    batch, and one bad document does not stop the others. Failures are counted and
    their first messages kept; nothing is dropped silently.

    Thread-safe. With ``flush_interval`` a background thread flushes (the ``/hit``
    beacon's use: callers never wait on the database); without, ``add`` writes each
    ``batch_size`` events as they fill, and ``flush()`` the rest. With a thread, a
    store failure (a full disk, a server gone) keeps the batch's buckets, ids set, to
    send again with backoff (a bucket already stored answers a duplicate key); an event
    refused for its content is set aside (``queries.quarantine``); the thread never
    stops.
    With a thread, past ``max_pending`` buffered events ``add`` refuses with
    :class:`RecorderOverloadedError`, so memory stays bounded. ``keyed``: each event
    comes with its place in a log file (``add(event, (stream, offset))``), so its
    bucket's ``_id`` is deterministic and a duplicate key means "already stored",
    counted in ``present``, not a failure.
    """

    def __init__(self, db, concern: str | int | None = None, batch_size: int = 1000,
                 flush_interval: float | None = None, max_pending: int = 100_000, clock=None,
                 keyed: bool = False, collection: str = schema.EVENTS,
                 pack=buckets.pack, row=buckets.row):
        wc = write_concern(concern)
        self.collection = (db.get_collection(collection, write_concern=wc) if wc
                           else db[collection])
        self._pack, self._row = pack, row     # another raw kind: events.custom
        self.acknowledged = wc is None or wc.acknowledged
        self.batch_size = batch_size
        self.max_pending = max_pending
        self.keyed = keyed
        self.totals = EventTotals()
        self._clock = clock or (lambda: dt.datetime.now(dt.UTC))
        self._pending: list[tuple] = []     # events as rows (buckets.ROW)
        self._keys: list[tuple[int, int]] = []
        self._lock = threading.Lock()
        self._flush_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        self.quarantine = Quarantine(db, "EventWriter")
        self.restarts = 0
        self.last_error = ""
        self._unsent: list[dict] = []       # buckets a store failure kept, to send again
        self.patience: threading.Event | None = None   # see _insert_patiently
        self._interval = flush_interval
        if flush_interval:
            self._thread = self._start_thread()

    def _start_thread(self) -> threading.Thread:
        thread = threading.Thread(target=self._run, args=(self._interval,),
                                  name="hitboard-events", daemon=True)
        thread.start()
        return thread

    def add(self, event: dict, key: tuple[int, int] | None = None) -> None:
        """Buffer ``event``; a keyed writer takes its ``(stream, offset)`` too."""
        when, site = event.get("time"), event.get("site")
        if not isinstance(when, dt.datetime) or not isinstance(site, str):
            raise ValueError(f"an event needs a site and a time, not {event!r:.200}")
        if self.keyed and key is None:
            raise ValueError("a keyed event writer needs each event's (stream, offset)")
        row = self._row(event)
        with self._lock:
            if self._thread is not None and self._waiting() >= self.max_pending:
                raise RecorderOverloadedError(
                    f"{self._waiting()} events are waiting for the database; event refused")
            self._pending.append(row)
            if self.keyed:
                self._keys.append(key)
            full = self._thread is None and len(self._pending) >= self.batch_size
        if full:
            self.flush()

    def write_lines(self, lines: dict[str, Sequence], sites: Sequence[str], stream: int,
                    offsets: Sequence[int]) -> int:
        """Write the events of parsed log lines now (an ingest's chunk of lines, mapped:
        ``lines`` holds their fields as columns, ``queries.ingest.logformat.columns``;
        ``sites`` are their sites, ``offsets`` where they start in the pass ``stream``),
        ``batch_size`` at a time; returns how many failed. A keyed writer's way: the
        lines' places name their buckets."""
        if not self.keyed:
            raise ValueError("log lines are written by a keyed event writer")
        failed = 0
        for start in range(0, len(sites), self.batch_size):
            part = slice(start, start + self.batch_size)
            times = lines["time"][part]
            failed += self._write(len(times), partial(
                buckets.pack_columns, times, sites[part],
                {name: lines[name][part] for name in LOG_FIELDS},
                streams=[stream] * len(times), offsets=offsets[part]))
        return failed

    def pending(self) -> int:
        with self._lock:
            return self._waiting()

    def _waiting(self) -> int:
        return len(self._pending) + sum(bucket["n"] for bucket in self._unsent)

    def flush(self) -> int:
        """Write every buffered event; returns how many failed in this call. With a
        thread, a store failure raises, the events kept for the next flush."""
        with self._flush_lock:
            if self._unsent:
                self._send_again()
            with self._lock:
                batch, self._pending = self._pending, []
                keys, self._keys = self._keys, []
            failed = 0
            for start in range(0, len(batch), self.batch_size):
                end = start + self.batch_size
                try:
                    failed += self._insert(batch[start:end], keys[start:end] or None)
                except BaseException:
                    # The batches not tried yet wait for the next flush, ahead of newer
                    # events: the failed one is kept (``_unsent``) or reported.
                    with self._lock:
                        self._pending[:0] = batch[end:]
                        self._keys[:0] = keys[end:]
                    raise
            return failed

    def _insert(self, rows: list[tuple], keys: list[tuple[int, int]] | None) -> int:
        """Insert these events; if they fail for their content, one by one, what still
        fails set aside."""
        try:
            return self._write(len(rows), partial(self._pack, rows, keys=keys))
        except Exception as exc:
            if transient(exc) or len(rows) == 1:
                raise
        failed = 0
        for i, row in enumerate(rows):
            try:
                failed += self._write(1, partial(self._pack, [row],
                                                 keys=keys[i:i + 1] if keys else None))
            except Exception as exc:
                if transient(exc):
                    raise
                self.quarantine.keep({"event": row}, exc, 1)
        return failed

    def _write(self, n: int, pack) -> int:
        """Insert the buckets of ``n`` events, ``pack(ingested)``; returns how many events
        failed. Stamped just before the write, as late as possible: a rollup that has
        read past this instant must not miss these documents (see rollups.SETTLE)."""
        bucketed = pack(self._clock())
        if self._thread is not None and not self.keyed:
            for bucket in bucketed:          # so a bucket sent again is known if stored
                bucket.setdefault("_id", ObjectId())
        try:
            self._insert_patiently(bucketed)
        except BulkWriteError as exc:
            return self._partly_written(bucketed, exc)
        except PyMongoError as exc:
            if self._thread is not None and not self.keyed and transient(exc):
                self._unsent.extend(bucketed)
                raise
            self.totals.failed += n
            self._note(f"{n} events not written: {type(exc).__name__}: {str(exc)[:200]}")
            return n
        if self.acknowledged:
            self.totals.written += n
        else:
            self.totals.unacknowledged += n
        return 0

    def _partly_written(self, bucketed: list[dict], exc: BulkWriteError) -> int:
        """Count the events of what an unordered insert of buckets did; returns how many
        events failed. With write-concern errors, none is known to be durable: all but
        present ones fail."""
        errors = exc.details.get("writeErrors", [])
        refused = {e["index"]: e for e in errors}
        present = sum(bucketed[i]["n"] for i, e in refused.items()
                      if self.keyed and e.get("code") == DUPLICATE_KEY)
        errors = [e for e in errors if not (self.keyed and e.get("code") == DUPLICATE_KEY)]
        total = sum(bucket["n"] for bucket in bucketed)
        inserted = total - sum(bucketed[i]["n"] for i in refused)
        if exc.details.get("writeConcernErrors"):
            inserted, errors = 0, exc.details["writeConcernErrors"]
        failed = total - inserted - present
        self.totals.written += inserted
        self.totals.present += present
        self.totals.failed += failed
        if failed:
            self._note(f"{failed} of {total} events refused: "
                       f"{errors[0]['errmsg'][:200]}" if errors else str(exc)[:200])
        return failed

    def _note(self, message: str) -> None:
        if len(self.totals.errors) < 10:
            self.totals.errors.append(message)

    def _insert_patiently(self, bucketed: list[dict]) -> None:
        """``insert_many``; with ``patience`` (a follower's stop event), a store failure is
        tried again with backoff until it passes or the follower stops: keyed buckets
        already stored answer a duplicate key (present)."""
        delay = 0.1
        while True:
            try:
                stamped(bucketed, self._clock())
                self.collection.insert_many(bucketed, ordered=False)
                return
            except BulkWriteError:
                raise
            except PyMongoError as exc:
                if self.patience is None or not transient(exc) or self.patience.wait(delay):
                    raise
                log.warning("events not written, trying again in %.1fs: %s", delay, exc)
                delay = min(30.0, delay * 2)

    def _send_again(self) -> None:
        """The buckets a store failure kept: those already stored answer a duplicate key
        and count as written once."""
        unsent, self._unsent = self._unsent, []
        try:
            refused = store_once(self.collection, stamped(unsent, self._clock()),
                                 self.quarantine)
        except Exception:
            self._unsent = unsent
            raise
        self.totals.written += sum(b["n"] for i, b in enumerate(unsent) if i not in refused)

    def _run(self, interval: float) -> None:
        delay = interval
        while not self._stop.wait(delay):
            try:
                self.flush()
                delay, self.last_error = interval, ""
            except Exception as exc:   # never stops: kept events are sent again later
                self.last_error = f"{type(exc).__name__}: {str(exc)[:200]}"
                delay = min(30.0, max(delay * 2, interval))
                log.warning("events not written, trying again in %.1fs: %s", delay, exc)

    def revive(self) -> bool:
        """Start the flush thread again if it stopped; True if it did."""
        if self._thread is None or self._thread.is_alive() or self._stop.is_set():
            return False
        self.restarts += 1
        log.error("the event writer's thread had stopped: started again")
        self._thread = self._start_thread()
        return True

    def accepting(self) -> bool:
        """Whether an event added now would be taken (not refused as overloaded)."""
        with self._lock:
            return self._thread is None or self._waiting() < self.max_pending

    def problems(self) -> list[str]:
        """What keeps events from being written, for ``/healthz``."""
        found = []
        if self._thread is not None and not self._thread.is_alive() and not self._stop.is_set():
            found.append("EventWriter: its flush thread is down")
        if self._thread is not None and self._waiting() >= self.max_pending:
            found.append(f"EventWriter: {self._waiting():,} events wait for the database "
                         f"({self.last_error or 'not keeping up'})")
        return found

    def close(self) -> None:
        """Stop the thread and write what is buffered; what cannot be is logged."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5)
        try:
            self.flush()
        except Exception as exc:
            log.error("%d events could not be written before close: %s", self._waiting(), exc)
