"""The embedded store: one SQLite database in WAL mode, shared by threads and processes.

SQLite gives what an embedded database needs: atomic, durable commits (a killed process
loses no committed write; the WAL is replayed on the next open), one writer at a time
with readers beside it, in as many processes as like (the dashboard, an ingest and a
rollup at once), and pages read from disk only as queries touch them, so opening costs
the same whatever the store holds.

Each process keeps one connection for writes, behind a lock (``BEGIN IMMEDIATE`` takes
SQLite's write lock at once, so concurrent writers queue instead of failing), and one
read connection per thread. Writers of several processes queue on an advisory lock of
the file ``write.lock`` first: SQLite's own wait polls, sleeping up to 100 ms at a time,
whereas ``flock`` wakes the next writer the moment the lock is free (an ingest's worker
processes write in turn). The kernel releases it when its process dies.

The catalog of collections and their indexes lives in the database (``catalog.py``)
and is re-read whenever SQLite's schema version says another process changed it. TTL
indexes are enforced every 60 s by a monitor thread in each writing
process, as mongod's TTL monitor does.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import os
import sqlite3
import threading
import time
import weakref
from contextlib import contextmanager, suppress
from pathlib import Path

import bson
from pymongo.errors import InvalidOperation, OperationFailure

from ...errors import InvalidStoreError, StoreReadOnlyError
from . import catalog, keys, layouts, opening, rekey
from .catalog import Collection
from .documents import key_values
from .failures import raise_conflict, store_failure
from .packing import Packer
from .planner import column_name, quote
from .reading import decode

FILENAME = "hitboard.sqlite3"
LOCK_FILENAME = "write.lock"
TTL_PERIOD_S = 60.0
BUSY_TIMEOUT_MS = 120_000
CLOSE_CHECKPOINT_MS = 200
WRITER_CACHE_KB = 65_536
READER_CACHE_KB = 16_384
# A bulk load (``hitboard ingest``): a page cache that holds the events' indexes and a
# WAL checkpointed every 64 MiB instead of every 4 MiB (SQLite's default), see
# ``bulk_loading``.
BULK_CACHE_KB = 65_536
FILL_ROWS = 10_000   # documents read at a time to fill a new index's columns
BULK_WAL_PAGES = 16_384

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


class _Connection(sqlite3.Connection):
    """sqlite3's connection, weakly referable (each keys its catalog cache without
    keeping it alive)."""


class EmbeddedStore:
    def __init__(self, directory: Path, read_only: bool = False):
        self.directory = directory
        self.path = directory / FILENAME
        self.read_only = read_only
        self.refs = 0
        self.closed = False
        self.write_lock = threading.RLock()
        self._depth = 0
        self._local = threading.local()
        # A reading thread's connection lives in its thread-local slot only, so it closes
        # when the thread ends (servers that start a thread per request would otherwise
        # pile connections up).
        self._catalogs: weakref.WeakKeyDictionary[_Connection, tuple[int, dict]] = (
            weakref.WeakKeyDictionary())
        self._owner: int | None = None
        self.packer = Packer()
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise InvalidStoreError(f"{directory} is a file, not a store directory: give "
                                    "a directory or a mongodb:// URI") from None
        except OSError as exc:
            raise InvalidStoreError(f"cannot make a store in {directory}: "
                                    f"{exc.strerror}") from None
        found = opening.kind(self.path)
        # A read-only process opens an existing store read-only; a new one it makes.
        self._uri = opening.uri(self.path, read_only and found is not opening.Kind.NEW)
        if "mode=ro" not in self._uri:
            opening.check_writable(directory, self.path, found)
        self._writer = self._connect(WRITER_CACHE_KB)
        self._queue = None if read_only else open(  # noqa: SIM115 - closed in close()
            directory / LOCK_FILENAME, "ab")
        if "mode=ro" not in self._uri:
            self._set_up()
            if not read_only:
                rekey.convert(self)
        if read_only:
            self._writer.execute("PRAGMA query_only=1")
        self._stop = threading.Event()
        if not read_only:
            threading.Thread(target=self._ttl_monitor, name="hitboard-ttl", daemon=True).start()

    # -- connections -------------------------------------------------------------------
    def _connect(self, cache_kb: int) -> sqlite3.Connection:
        con = sqlite3.connect(self._uri, uri=True, isolation_level=None,
                              check_same_thread=False, factory=_Connection,
                              timeout=BUSY_TIMEOUT_MS / 1000, cached_statements=256)
        con.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        con.execute("PRAGMA synchronous=NORMAL")
        con.execute(f"PRAGMA cache_size=-{cache_kb}")
        con.create_function("hb_ms", 1, keys.ms_of_key, deterministic=True)
        return con

    def reader(self) -> sqlite3.Connection:
        """The connection a read uses: the writer's inside this thread's write
        transaction (to see its own writes), else this thread's own."""
        if self.closed:
            raise InvalidOperation("the embedded store is closed")
        if self._depth and self._owner == threading.get_ident():
            return self._writer
        con = getattr(self._local, "con", None)
        if con is None:
            con = self._local.con = self._connect(READER_CACHE_KB)
            if self.read_only:
                con.execute("PRAGMA query_only=1")
        return con

    @contextmanager
    def writing(self):
        """One write transaction (re-entrant: nested calls join the outer one). SQLite's
        own failures (a full disk, a lock held too long, an I/O error) leave as pymongo's
        ``OperationFailure``, as a MongoDB server reports them (``store_failure``): the
        writers retry those, and take anything else for a fault of what they wrote."""
        if self.read_only:
            raise StoreReadOnlyError(
                f"the embedded store {self.directory} is open read-only in this process")
        with self.write_lock:
            if self.closed:
                raise InvalidOperation("the embedded store is closed")
            if self._depth:
                self._depth += 1
                try:
                    yield self._writer
                finally:
                    self._depth -= 1
                return
            fcntl.flock(self._queue, fcntl.LOCK_EX)
            committed = False
            try:
                self._writer.execute("BEGIN IMMEDIATE")
                self._depth, self._owner = 1, threading.get_ident()
                try:
                    yield self._writer
                except BaseException:
                    with suppress(sqlite3.Error):    # a full disk may have ended it already
                        self._writer.execute("ROLLBACK")
                    raise
                else:
                    self._writer.execute("COMMIT")
                    committed = True
                finally:
                    self._depth, self._owner = 0, None
                    if committed:
                        self.packer.committed()
                    else:
                        self.packer.rolled_back()
            except sqlite3.OperationalError as exc:
                raise store_failure(exc) from exc
            except sqlite3.DatabaseError as exc:
                if isinstance(exc, sqlite3.IntegrityError):
                    raise
                raise store_failure(exc) from exc
            finally:
                fcntl.flock(self._queue, fcntl.LOCK_UN)

    def bulk_loading(self, cache_kb: int = BULK_CACHE_KB,
                     wal_pages: int = BULK_WAL_PAGES) -> None:
        """Tune this process's writer for large write transactions (``hitboard ingest``).

        Events land all over their indexes (a log's requests are spread over pages and
        time), so every transaction dirties index pages across the whole B-tree: each
        commit appends them to the WAL and each checkpoint copies them into the
        database, a cost that grows with the store. A larger page cache keeps the
        indexes in memory, and a checkpoint every ``wal_pages`` pages (not 1,000) copies
        a page rewritten by several transactions once. Durability is unchanged (WAL,
        ``synchronous=NORMAL``); the cache grows only as pages are used."""
        with self.write_lock:
            self._writer.execute(f"PRAGMA cache_size=-{int(cache_kb)}")
            self._writer.execute(f"PRAGMA wal_autocheckpoint={int(wal_pages)}")

    # -- catalog -------------------------------------------------------------------------
    def _set_up(self) -> None:
        """WAL mode and the bookkeeping tables. Two processes opening a new store at
        once both switch it to WAL, and SQLite refuses one of them at once rather than
        let it wait (each holds a read lock the other's switch needs): writers take
        turns on the lock file, and a reader still refused tries again while the busy
        timeout lasts."""
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        while True:
            if self._queue is not None:
                fcntl.flock(self._queue, fcntl.LOCK_EX)
            try:
                self._writer.execute("PRAGMA journal_mode=WAL")
                catalog.create(self._writer)
                return
            except sqlite3.OperationalError as exc:
                if self._writer.in_transaction:
                    self._writer.execute("ROLLBACK")
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
            finally:
                if self._queue is not None:
                    fcntl.flock(self._queue, fcntl.LOCK_UN)
            time.sleep(0.05)

    def _catalog(self, con: sqlite3.Connection) -> dict[tuple[str, str], Collection]:
        """The catalog as ``con`` sees it (each connection reads its own snapshot),
        read again when SQLite's schema version says it changed."""
        version = con.execute("PRAGMA schema_version").fetchone()[0]
        cached = self._catalogs.get(con)
        if cached is not None and cached[0] == version:
            return cached[1]
        found = catalog.read(con, self.packer)
        self._catalogs[con] = (version, found)
        return found

    def collection(self, db: str, name: str, con: sqlite3.Connection | None = None
                   ) -> Collection | None:
        """The collection's catalog entry as of now; None if it does not exist."""
        return self._catalog(con or self.reader()).get((db, name))

    def ensure_collection(self, con: sqlite3.Connection, db: str, name: str) -> Collection:
        """The collection, created if missing (inside a write transaction)."""
        info = self.collection(db, name, con)
        if info is not None:
            return info
        table = f"{db}.{name}"
        con.execute(layouts.create_sql(table, name))
        con.execute("INSERT INTO hb_collections VALUES (?, ?, ?)", (db, name, table))
        return self.collection(db, name, con)

    def create_index(self, db: str, name: str, index: str, key: list[tuple[str, int]],
                     unique: bool = False, ttl: int | None = None) -> None:
        with self.writing() as con:
            info = self.ensure_collection(con, db, name)
            spec = {"key": [[f, d] for f, d in key], "unique": unique}
            if ttl is not None:
                spec["expireAfterSeconds"] = int(ttl)
            old = info.indexes.get(index)
            if old is not None:
                if old == spec:
                    return
                raise_conflict(index)
            if info.layout is not None and layouts.is_key(info.layout, key):
                # The table is this index (its primary key). An empty index stands for
                # it: its creation tells every connection that the catalog changed.
                con.execute(f"CREATE INDEX {quote(info.table + '/' + index)} ON "
                            f"{quote(info.table)} ({quote(column_name(key[0][0]))}) WHERE 0")
                con.execute("INSERT INTO hb_indexes VALUES (?, ?, ?, ?)",
                            (db, name, index, bson.encode(spec)))
                return
            new_columns = [f for f, _ in key if f != "_id" and f not in info.columns]
            for path in new_columns:
                con.execute(f"ALTER TABLE {quote(info.table)} ADD COLUMN "
                            f"{quote(column_name(path))}")
            if new_columns:
                self._fill_columns(con, info, new_columns)
            terms = ", ".join(f"{quote(column_name(f))} {'DESC' if d == -1 else 'ASC'}"
                              for f, d in key)
            con.execute(f"CREATE {'UNIQUE ' if unique else ''}INDEX "
                        f"{quote(info.table + '/' + index)} ON {quote(info.table)} ({terms})")
            con.execute("INSERT INTO hb_indexes VALUES (?, ?, ?, ?)",
                        (db, name, index, bson.encode(spec)))

    def _fill_columns(self, con, info: Collection, paths: list[str]) -> None:
        """The new key columns of every stored document, ``FILL_ROWS`` rows at a time: an
        index added to a year of hourly rollups (8.8 million documents) read them all at
        once (5.2 GB)."""
        table = info.table
        sets = ", ".join(f"{quote(column_name(p))} = ?" for p in paths)
        if info.layout is not None:
            rows = con.execute(f"SELECT {info.address}, doc FROM {quote(table)}").fetchall()
            con.executemany(
                f"UPDATE {quote(table)} SET {sets} WHERE {info.at_address}",
                [(*key_values(info.layout.whole(decode(self.packer.unpack(con, row[-1])),
                                                *row[:-1]), paths), *row[:-1])
                 for row in rows])
            return
        last = 0
        while rows := con.execute(f"SELECT rid, doc FROM {quote(table)} WHERE rid > ? "
                                  f"ORDER BY rid LIMIT {FILL_ROWS}", (last,)).fetchall():
            con.executemany(f"UPDATE {quote(table)} SET {sets} WHERE rid = ?",
                            [(*key_values(decode(self.packer.unpack(con, doc)), paths), rid)
                             for rid, doc in rows])
            last = rows[-1][0]

    def drop_index(self, db: str, name: str, index: str) -> None:
        with self.writing() as con:
            info = self.collection(db, name, con)
            if info is None or index not in info.indexes:
                raise OperationFailure(f"index not found with name [{index}]", code=27)
            con.execute(f"DROP INDEX IF EXISTS {quote(info.table + '/' + index)}")
            con.execute("DELETE FROM hb_indexes WHERE db = ? AND coll = ? AND name = ?",
                        (db, name, index))

    def drop_collection(self, db: str, name: str) -> None:
        with self.writing() as con:
            info = self.collection(db, name, con)
            if info is None:
                return
            con.execute(f"DROP TABLE {quote(info.table)}")
            con.execute("DELETE FROM hb_collections WHERE db = ? AND name = ?", (db, name))
            con.execute("DELETE FROM hb_indexes WHERE db = ? AND coll = ?", (db, name))

    def collection_names(self, db: str) -> list[str]:
        return sorted(name for d, name in self._catalog(self.reader()) if d == db)

    def database_names(self) -> list[str]:
        return sorted({d for d, _ in self._catalog(self.reader())})

    # -- TTL -------------------------------------------------------------------------
    def expire_ttl(self, now: dt.datetime | None = None) -> int:
        """Delete documents past their TTL index's expiry; returns how many."""
        now = now or dt.datetime.now(dt.UTC)
        removed = 0
        for info in list(self._catalog(self.reader()).values()):
            for spec in info.indexes.values():
                if "expireAfterSeconds" not in spec:
                    continue
                path = spec["key"][0][0]
                cutoff = keys.encode(now - dt.timedelta(seconds=spec["expireAfterSeconds"]))
                lower, _ = keys.BRACKETS["date"]
                with self.writing() as con:
                    removed += con.execute(
                        f"DELETE FROM {quote(info.table)} WHERE {quote(column_name(path))} "
                        "< ? AND " f"{quote(column_name(path))} >= ?", (cutoff, lower)).rowcount
        return removed

    def _ttl_monitor(self) -> None:
        while not self._stop.wait(TTL_PERIOD_S):
            if self.closed:
                return
            try:
                self.expire_ttl()
            except (sqlite3.Error, InvalidOperation):
                continue  # busy or closing: the next pass expires them

    # -- lifecycle -------------------------------------------------------------------
    def release(self) -> None:
        with _OPEN_LOCK:
            self.refs -= 1
            if self.refs > 0 or self.closed:
                return
            _OPEN.pop((str(self.directory), self.read_only), None)
        self.close()

    def close(self) -> None:
        with self.write_lock:
            if self.closed:
                return
            self.closed = True
            self._stop.set()
            if not self.read_only:
                # The write-ahead log is emptied (else it stays at its largest while other
                # connections live), if no reader holds it within CLOSE_CHECKPOINT_MS:
                # another process's long read must not hold this exit for the busy timeout.
                with suppress(sqlite3.Error):
                    self._writer.execute(f"PRAGMA busy_timeout={CLOSE_CHECKPOINT_MS}")
                    self._writer.execute("PRAGMA optimize")
                    self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._writer.close()
            if self._queue is not None:
                self._queue.close()
            # Only this thread's reader: closing a connection another thread may be
            # stepping through crashes CPython's sqlite3 (a server thread still answering
            # a request as its app closes). Theirs close as their threads end.
            own = getattr(self._local, "con", None)
            if own is not None:
                own.close()
                self._local.con = None
