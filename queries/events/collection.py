"""The ``events`` collection: one document per request, kept for a retention period.

Document: ``{time, site, host, method, path, query, status, bytes, referrer, user_agent,
ingested}``, plus ``country`` where the source knows it better than the address does (the
load generator's drawn visitors). ``path`` is the page (no query string); ``time`` is
when the request happened (aware UTC), ``ingested`` when the document was written:
rollups find what changed since their last run by ``ingested``, so a late event (an old
``time``) counts.

Retention counts from ``ingested``, not ``time`` (backfilling the 2015 test file would
otherwise delete every event at once), and events leave only once the rollups have read
them: :func:`expire` runs after each rollup run and deletes what is both older than the
retention and behind the rollups' checkpoint. A TTL index cannot wait for the rollups (a
rollup job stopped for longer than the retention would lose hours), so there is none: an
older store's ``ingested_ttl`` index is replaced by a plain one.

Events from log files get a deterministic ``_id`` (:func:`event_id`), so writing the same
line twice (ingest replaying a batch after a crash) stores it once; beacon and load
generator events keep server-made ObjectIds.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import threading
from dataclasses import dataclass, field

from bson import ObjectId
from pymongo import ASCENDING, DESCENDING
from pymongo.errors import BulkWriteError, PyMongoError
from pymongo.write_concern import WriteConcern

from ..errors import DUPLICATE_KEY, HitboardError, RecorderOverloadedError
from ..stats import schema

INGESTED_INDEX = "ingested"
OLD_TTL_INDEX = "ingested_ttl"
WRITE_CONCERNS = ("0", "1", "majority")
INDEXES = {
    # One page's requests over time: the recent-hits feed of chosen pages.
    "site_path_time": [("site", ASCENDING), ("path", ASCENDING), ("time", DESCENDING)],
    # A site's requests over time: the whole-site feed, and the rollups' hourly $group,
    # which reads only these fields, so the index covers it (no document is fetched, on
    # MongoDB as on the embedded store, which runs that $group in SQL on these columns).
    "site_time": [("site", ASCENDING), ("time", DESCENDING), ("path", ASCENDING),
                  ("status", ASCENDING), ("bytes", ASCENDING)],
    # What changed since the rollups' checkpoint, and what expiry removes.
    INGESTED_INDEX: [("ingested", ASCENDING)],
}


def check_retention(days) -> int:
    """``days`` as a retention in days, or a clear error (1 to 36,500)."""
    try:
        value = int(days)
    except (TypeError, ValueError):
        value = 0
    if value < 1 or value > 36_500:
        raise HitboardError(f"invalid event retention {days!r}: a whole number of days, 1 or more")
    return value


def ensure_event_indexes(db) -> list[str]:
    """Create the events indexes (and drop a TTL index left by an older hitboard)."""
    events = db[schema.EVENTS]
    info = events.index_information()
    if OLD_TTL_INDEX in info:
        events.drop_index(OLD_TTL_INDEX)
    existing = {name: tuple(tuple(pair) for pair in spec["key"]) for name, spec in info.items()}
    return [name if existing.get(name) == tuple(keys) else events.create_index(keys, name=name)
            for name, keys in INDEXES.items()]


def expire(db, retention: int, rolled_up_until: dt.datetime,
           now: dt.datetime | None = None) -> int:
    """Delete the events ingested more than ``retention`` days ago that the rollups have
    read (ingested before ``rolled_up_until``); returns how many."""
    now = now or dt.datetime.now(dt.UTC)
    cutoff = min(now - dt.timedelta(days=check_retention(retention)), rolled_up_until)
    return db[schema.EVENTS].delete_many({"ingested": {"$lt": cutoff}}).deleted_count


def event_document(record, site: str) -> dict:
    """An event from a parsed log line (a :class:`~queries.ingest.logformat.LogRecord`);
    ``ingested`` is set when the batch is written."""
    return {
        "time": record.time, "site": site, "host": record.host, "method": record.method,
        "path": record.path, "query": record.query, "status": record.status,
        "bytes": record.bytes, "referrer": record.referrer, "user_agent": record.user_agent,
    }


def stream_key(source: str) -> int:
    """A 64-bit key naming one pass over one file (see :func:`event_id`)."""
    return int.from_bytes(hashlib.blake2b(source.encode(), digest_size=8).digest(), "big")


def event_id(stream: int, offset: int, time: dt.datetime) -> ObjectId:
    """The ``_id`` of the event of the log line at byte ``offset`` of the pass ``stream``
    (:func:`stream_key`): an ObjectId, like every other event's, whose time part is the
    request's second and whose other 8 bytes are the stream key XOR the offset. Within a
    pass, distinct offsets give distinct ids; lines of two passes share one only if they
    share a second and the 64-bit keys happen to differ exactly by their offsets' XOR."""
    seconds = min(max(int(time.timestamp()), 0), 2**32 - 1)
    low = (stream ^ offset) & 0xFFFF_FFFF_FFFF_FFFF
    return ObjectId(((seconds << 64) | low).to_bytes(12, "big"))


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


class EventWriter:
    """Buffers events and writes them with unordered ``insert_many``: one round trip per
    batch, and one bad document does not stop the others. Failures are counted and
    their first messages kept; nothing is dropped silently.

    Thread-safe. With ``flush_interval`` a background thread flushes (the ``/hit``
    beacon's use: callers never wait on the database); without, call ``flush()``.
    Past ``max_pending`` buffered events ``add`` refuses with
    :class:`RecorderOverloadedError`, so memory stays bounded. ``keyed``: the events
    carry deterministic ``_id`` s (:func:`event_id`), so a duplicate key means "already
    stored", counted in ``present``, not a failure.
    """

    def __init__(self, db, concern: str | int | None = None, batch_size: int = 1000,
                 flush_interval: float | None = None, max_pending: int = 100_000, clock=None,
                 keyed: bool = False):
        wc = write_concern(concern)
        self.collection = (db.get_collection(schema.EVENTS, write_concern=wc) if wc
                           else db[schema.EVENTS])
        self.acknowledged = wc is None or wc.acknowledged
        self.batch_size = batch_size
        self.max_pending = max_pending
        self.keyed = keyed
        self.totals = EventTotals()
        self._clock = clock or (lambda: dt.datetime.now(dt.UTC))
        self._pending: list[dict] = []
        self._lock = threading.Lock()
        self._flush_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        if flush_interval:
            self._thread = threading.Thread(target=self._run, args=(flush_interval,),
                                            name="hitboard-events", daemon=True)
            self._thread.start()

    def add(self, event: dict) -> None:
        with self._lock:
            if len(self._pending) >= self.max_pending:
                raise RecorderOverloadedError(
                    f"{len(self._pending)} events are waiting for the database; event refused")
            self._pending.append(event)

    def pending(self) -> int:
        with self._lock:
            return len(self._pending)

    def flush(self) -> int:
        """Write every buffered event; returns how many failed in this call."""
        with self._flush_lock:
            with self._lock:
                batch, self._pending = self._pending, []
            failed = 0
            for start in range(0, len(batch), self.batch_size):
                failed += self._insert(batch[start:start + self.batch_size])
            return failed

    def _insert(self, docs: list[dict]) -> int:
        # Stamped just before the write, as late as possible: a rollup that has read
        # past this instant must not miss these documents (see rollups.SETTLE).
        now = self._clock()
        for doc in docs:
            doc["ingested"] = now
        try:
            self.collection.insert_many(docs, ordered=False)
        except BulkWriteError as exc:
            return self._partly_written(docs, exc)
        except PyMongoError as exc:
            self.totals.failed += len(docs)
            self._note(f"{len(docs)} events not written: {type(exc).__name__}: {str(exc)[:200]}")
            return len(docs)
        if self.acknowledged:
            self.totals.written += len(docs)
        else:
            self.totals.unacknowledged += len(docs)
        return 0

    def _partly_written(self, docs: list[dict], exc: BulkWriteError) -> int:
        """Count what an unordered insert did; returns how many events failed. With
        write-concern errors, none is known to be durable: all but present ones fail."""
        inserted, errors = exc.details.get("nInserted", 0), exc.details.get("writeErrors", [])
        present = sum(1 for e in errors if e.get("code") == DUPLICATE_KEY) if self.keyed else 0
        errors = [e for e in errors if not present or e.get("code") != DUPLICATE_KEY]
        if exc.details.get("writeConcernErrors"):
            inserted, errors = 0, exc.details["writeConcernErrors"]
        failed = len(docs) - inserted - present
        self.totals.written += inserted
        self.totals.present += present
        self.totals.failed += failed
        if failed:
            self._note(f"{failed} of {len(docs)} events refused: "
                       f"{errors[0]['errmsg'][:200]}" if errors else str(exc)[:200])
        return failed

    def _note(self, message: str) -> None:
        if len(self.totals.errors) < 10:
            self.totals.errors.append(message)

    def _run(self, interval: float) -> None:
        while not self._stop.wait(interval):
            self.flush()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5)
        self.flush()
