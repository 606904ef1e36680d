"""The embedded store: mongomock's query engine, made durable and process-exclusive.

mongomock implements MongoDB's query, update and aggregation language in memory. This
module adds what an embedded database needs around it: every write is applied under one
lock (so every thread of the process may use it) and appended to a journal before it
returns (so it survives a restart); an exclusive ``flock`` on the directory makes a second
writing process fail at once with :class:`StoreLockedError` instead of losing updates;
TTL indexes are enforced by a monitor thread, as mongod does every 60 seconds.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import os
import sys
import threading
import time
from pathlib import Path

import mongomock
from mongomock.store import ServerStore

from ..errors import StoreLockedError, StoreReadOnlyError
from . import fastpath, journal

fastpath.install()

COMPACT_BYTES = 64 * 1024 * 1024
TTL_PERIOD_S = 60.0
CAP_PERIOD_S = 5.0

_OPEN: dict[tuple[str, bool], EmbeddedStore] = {}
_OPEN_LOCK = threading.Lock()


def open_store(directory: str | os.PathLike, read_only: bool = False) -> EmbeddedStore:
    """One store per directory and mode in a process, shared by every caller."""
    path = Path(directory).expanduser().resolve()
    with _OPEN_LOCK:
        key = (str(path), read_only)
        store = _OPEN.get(key)
        if store is None or store.closed:
            store = EmbeddedStore(path, read_only=read_only)
            _OPEN[key] = store
        store.refs += 1
        return store


class EmbeddedStore:
    def __init__(self, directory: Path, read_only: bool = False):
        self.directory = directory
        self.read_only = read_only
        self.lock = threading.RLock()
        self.refs = 0
        self.closed = False
        self._client = mongomock.MongoClient(tz_aware=True, _store=ServerStore())
        self._ttl: dict[tuple[str, str], tuple[str, int]] = {}
        self._caps: dict[tuple[str, str], tuple[int, str]] = {}
        self._lock_file = None
        self._journal: journal.JournalWriter | None = None
        directory.mkdir(parents=True, exist_ok=True)
        if not read_only:
            self._acquire_lock()
        self._generation = self._load_consistent() if read_only else self._load()
        if not read_only:
            self._journal = journal.JournalWriter(journal.journal_path(directory, self._generation))
            self._stop = threading.Event()
            threading.Thread(target=self._ttl_monitor, name="hitboard-ttl", daemon=True).start()

    # -- process exclusion -------------------------------------------------------------
    def _acquire_lock(self) -> None:
        path = self.directory / "LOCK"
        handle = path.open("a+")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise StoreLockedError(
                f"the embedded store {self.directory} is in use by {holder}. Stop that process, "
                "use another --store directory, or point HITBOARD_STORE at a MongoDB server "
                "(mongodb://...) to share data between processes."
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()} ({' '.join(Path(a).name for a in sys.argv[:2])})")
        handle.flush()
        self._lock_file = handle

    # -- loading and compaction --------------------------------------------------------
    def _load(self) -> int:
        header, documents = journal.read_snapshot(self.directory)
        generation = header["generation"]
        for spec in header.get("indexes", []):
            self._apply(spec["db"], spec["c"], "create_index", [spec["keys"]], spec["options"])
        batch: dict[tuple[str, str], list[dict]] = {}
        for record in documents:
            batch.setdefault((record["db"], record["c"]), []).append(record["d"])
        for (db, coll), docs in batch.items():
            self._client[db][coll].insert_many(docs)
        path = journal.journal_path(self.directory, generation)
        for record in journal.read_journal(path, repair=not self.read_only):
            self._apply(record["db"], record["c"], record["op"], record["a"], record["k"])
        if not self.read_only:
            for stale in self.directory.glob("journal-*.bson"):
                if stale != path:
                    stale.unlink()
        return generation

    def _load_consistent(self) -> int:
        """A reader beside a live writer: if the writer compacted while we loaded, journal
        G may have vanished under us (snapshot G+1 holds its writes), so load again."""
        for _ in range(10):
            generation = self._load()
            if journal.snapshot_generation(self.directory) == generation:
                return generation
            self._client = mongomock.MongoClient(tz_aware=True, _store=ServerStore())
            self._ttl.clear()
        raise StoreLockedError(f"the embedded store {self.directory} kept changing while read")

    def compact(self) -> None:
        """Fold the journal into a new snapshot (see journal.py for the crash argument)."""
        with self.lock:
            if self._journal is None or self._journal.size() == 0:
                return
            header = {"generation": self._generation + 1, "indexes": self._index_specs()}
            journal.write_snapshot(self.directory, header, self._records())
            old = self._journal
            self._generation += 1
            self._journal = journal.JournalWriter(
                journal.journal_path(self.directory, self._generation)
            )
            old.close()
            old.path.unlink(missing_ok=True)

    def _records(self):
        for db_name in self._client.list_database_names():
            db = self._client[db_name]
            for name in db.list_collection_names():
                # The stored documents themselves: encoded at once, under the lock.
                for doc in list(db[name]._store.documents):
                    yield {"db": db_name, "c": name, "d": doc}

    def _index_specs(self) -> list[dict]:
        specs = []
        for db_name in self._client.list_database_names():
            db = self._client[db_name]
            for name in db.list_collection_names():
                for index_name, info in db[name].index_information().items():
                    if index_name == "_id_":
                        continue
                    options = {k: v for k, v in info.items() if k not in ("key", "v", "ns")}
                    options["name"] = index_name
                    keys = [list(pair) for pair in info["key"]]
                    specs.append({"db": db_name, "c": name, "keys": keys, "options": options})
        return specs

    # -- operations --------------------------------------------------------------------
    def collection(self, db: str, name: str):
        return self._client[db][name]

    def write(self, db: str, coll: str, op: str, args: list, kwargs: dict | None = None):
        """Apply one write under the lock and journal it; failed writes are not journaled."""
        kwargs = kwargs or {}
        if self.read_only:
            raise StoreReadOnlyError(
                f"the embedded store {self.directory} is open read-only in this process"
            )
        with self.lock:
            result = self._apply(db, coll, op, args, kwargs)
            upserted = getattr(result, "upserted_id", None)
            if upserted is not None and "_id" not in args[0]:
                # Replay must create the same _id the live write generated.
                args = [{**args[0], "_id": upserted}, *args[1:]]
            self._journal.append({"db": db, "c": coll, "op": op, "a": args, "k": kwargs})
            if self._journal.size() > COMPACT_BYTES:
                self.compact()
            return result

    def _apply(self, db: str, coll: str, op: str, args: list, kwargs: dict):
        collection = self._client[db][coll]
        if op == "create_index":
            keys = [tuple(pair) for pair in args[0]]
            ttl = kwargs.get("expireAfterSeconds")
            name = collection.create_index(keys, **kwargs)
            fastpath.add_index(collection, keys)
            if ttl is not None:
                self._ttl[(db, coll)] = (keys[0][0], int(ttl))
                # mongomock would scan the whole collection for expired documents on
                # every access (quadratic inserts, unjournaled deletes); the monitor
                # below expires them instead, journaled, every 60 s as mongod does.
                collection._store._ttl_indexes.pop(name, None)
            return name
        if op == "drop":
            self._ttl.pop((db, coll), None)
            return self._client[db].drop_collection(coll)
        result = getattr(collection, op)(*args, **kwargs)
        if op in ("update_one", "update_many", "replace_one", "find_one_and_update"):
            fastpath.touched(collection, args[1])
        return result

    # -- TTL -------------------------------------------------------------------------
    def expire_ttl(self, now: dt.datetime | None = None) -> int:
        """Delete documents past their TTL index's expiry; returns how many."""
        now = now or dt.datetime.now(dt.UTC)
        removed = 0
        for (db, coll), (field, seconds) in list(self._ttl.items()):
            cutoff = now - dt.timedelta(seconds=seconds)
            result = self.write(db, coll, "delete_many", [{field: {"$lt": cutoff}}])
            removed += result.deleted_count
        return removed

    def cap(self, db: str, coll: str, max_documents: int, oldest_by: str) -> None:
        """Keep at most ``max_documents`` in a collection, removing the oldest by
        ``oldest_by`` (as a capped collection would): this store holds everything in
        memory, so an unbounded stream of raw events must not outgrow it."""
        self._caps[(db, coll)] = (int(max_documents), oldest_by)

    def enforce_caps(self) -> int:
        """Trim capped collections to 90% of their cap once over it; returns removed."""
        removed = 0
        for (db, coll), (limit, field) in list(self._caps.items()):
            with self.lock:
                engine = self._client[db][coll]
                excess = len(engine._store) - limit
                if excess <= 0:
                    continue
                excess += limit // 10
                ids = fastpath.top_ids(engine, {}, field, 1, excess)
                if ids is None:
                    ids = [doc["_id"] for doc in engine.find({}, {"_id": 1}).sort(field, 1)
                           .limit(excess)]
                removed += self.write(db, coll, "delete_many",
                                      [{"_id": {"$in": ids}}]).deleted_count
        return removed

    def _ttl_monitor(self) -> None:
        """Caps every few seconds, TTL expiry every 60 s (as mongod's TTL monitor)."""
        next_ttl = time.monotonic() + TTL_PERIOD_S
        while not self._stop.wait(CAP_PERIOD_S):
            if self.closed:
                return
            self.enforce_caps()
            if time.monotonic() >= next_ttl:
                next_ttl += TTL_PERIOD_S
                self.expire_ttl()

    # -- lifecycle -------------------------------------------------------------------
    def release(self) -> None:
        with _OPEN_LOCK:
            self.refs -= 1
            if self.refs > 0 or self.closed:
                return
            _OPEN.pop((str(self.directory), self.read_only), None)
        self.close()

    def close(self) -> None:
        with self.lock:
            if self.closed:
                return
            self.closed = True
            if self._journal is not None:
                self._stop.set()
                self.compact()
                self._journal.close()
            if self._lock_file is not None:
                fcntl.flock(self._lock_file.fileno(), fcntl.LOCK_UN)
                self._lock_file.close()

