"""The embedded store's life: threads and processes sharing it, a new store opened by
several at once, crash safety (SIGKILL at any point), read-only access, reopening and
closing, and its write queue. The rows it writes are ``test_store_writes.py``'s."""

from __future__ import annotations

import datetime as dt
import fcntl
import gc
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import weakref

import pytest
from pymongo import ASCENDING
from pymongo.errors import DuplicateKeyError, InvalidOperation

import queries
from queries.errors import StoreReadOnlyError
from queries.store.embedded.store import EmbeddedStore

UTC = dt.UTC


def test_threads_share_the_store_without_losing_updates(embedded_db):
    def bump():
        for _ in range(300):
            embedded_db.counters.update_one({"_id": "c"}, {"$inc": {"n": 1}}, upsert=True)
            list(embedded_db.counters.find({}))

    threads = [threading.Thread(target=bump) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert embedded_db.counters.find_one({"_id": "c"})["n"] == 2400


BUMPER = """
import sys, queries
db = queries.connect(sys.argv[1])
for i in range(int(sys.argv[2])):
    db.counters.update_one({"_id": "c"}, {"$inc": {"n": 1}}, upsert=True)
    db.events.insert_one({"writer": sys.argv[3], "i": i})
db.client.close()
"""


def test_processes_share_the_store_without_losing_updates(tmp_path):
    """Four processes write the same document and collection at once: every increment
    and every insert lands (SQLite's write lock serialises them; none is refused)."""
    store = str(tmp_path / "store")
    procs = [subprocess.Popen([sys.executable, "-c", BUMPER, store, "150", str(w)],
                              stderr=subprocess.PIPE, text=True) for w in range(4)]
    for proc in procs:
        assert proc.wait(timeout=120) == 0, proc.stderr.read()
    db = queries.connect(store, read_only=True)
    try:
        assert db.counters.find_one({"_id": "c"})["n"] == 600
        assert db.events.count_documents({}) == 600
    finally:
        db.client.close()


def test_a_reader_sees_what_another_process_commits(tmp_path):
    store = str(tmp_path / "store")
    writer = queries.connect(store)
    reader_code = textwrap.dedent("""
        import sys, queries
        db = queries.connect(sys.argv[1], read_only=True)
        print(db.counters.find_one({"_id": "c"})["n"])
    """)
    try:
        writer.counters.insert_one({"_id": "c", "n": 3})
        read = lambda: subprocess.run([sys.executable, "-c", reader_code, store],  # noqa: E731
                                      capture_output=True, text=True, timeout=60).stdout
        assert read().strip() == "3"
        writer.counters.update_one({"_id": "c"}, {"$inc": {"n": 1}})
        assert read().strip() == "4"
    finally:
        writer.client.close()


KILLED = """
import sys, queries
db = queries.connect(sys.argv[1])
db.events.create_index([("i", 1)])
i = 0
while True:
    db.counters.update_one({"_id": "c"}, {"$inc": {"n": 1}}, upsert=True)
    db.events.insert_many([{"i": i, "pad": "x" * 2000} for _ in range(50)])
    i += 1
    print(i, flush=True)   # acknowledged: both writes above have returned
"""


@pytest.mark.parametrize("after", [0.4, 1.5])
def test_sigkill_loses_no_acknowledged_write(tmp_path, after):
    """SIGKILL a writer in the middle of its writes, WAL checkpoints included (50 × 2 KB
    per step fills the WAL past SQLite's 1,000-page checkpoint many times): every step it
    reported done is there after reopening, and no step is there in part."""
    store = str(tmp_path / "store")
    proc = subprocess.Popen([sys.executable, "-c", KILLED, store], stdout=subprocess.PIPE,
                            text=True)
    time.sleep(after)
    lines = []
    deadline = time.monotonic() + 30
    while len(lines) < 5 and time.monotonic() < deadline:
        lines.append(proc.stdout.readline())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    acknowledged = int([x for x in lines if x.strip()][-1])
    db = queries.connect(store)
    try:
        n = db.counters.find_one({"_id": "c"})["n"]
        assert n >= acknowledged
        assert db.events.count_documents({}) in (n * 50, (n - 1) * 50)
        assert db.events.count_documents({"i": {"$gte": n}}) == 0
    finally:
        db.client.close()


def test_indexes_and_data_survive_reopen(tmp_path):
    path = str(tmp_path / "s")
    db = queries.connect(path)
    now = dt.datetime(2026, 11, 21, 12, tzinfo=UTC)
    db.expiring.create_index([("ts", ASCENDING)], expireAfterSeconds=60)
    db.expiring.insert_one({"ts": now})
    db.client.close()
    db = queries.connect(path)
    try:
        assert db.expiring.index_information()["ts_1"]["expireAfterSeconds"] == 60
        assert db.client.store.expire_ttl(now + dt.timedelta(seconds=61)) == 1
    finally:
        db.client.close()


def test_closing_empties_the_write_ahead_log_unless_another_reader_holds_it(tmp_path):
    """The log is emptied at close when nobody reads it; a reader in another connection
    (another process's dashboard) keeps it, without holding the close for the busy timeout
    (120 s: a hanging exit), and loses nothing."""
    import sqlite3

    from queries.store.embedded import store as embedded

    path = tmp_path / "s"
    db = queries.connect(str(path))
    db.c.insert_many([{"_id": i, "v": "x" * 100} for i in range(2000)])
    db.client.close()
    wal = path / f"{embedded.FILENAME}-wal"
    assert not wal.exists() or wal.stat().st_size == 0

    db = queries.connect(str(path))
    db.c.insert_many([{"_id": -i, "v": "y" * 100} for i in range(1, 2001)])
    other = sqlite3.connect(path / embedded.FILENAME)
    other.execute("BEGIN")
    other.execute("SELECT count(*) FROM sqlite_master").fetchall()    # holds a snapshot
    closing = threading.Thread(target=db.client.close)
    closing.start()
    closing.join(30)
    try:
        assert not closing.is_alive()
    finally:
        other.rollback()
        other.close()
    db = queries.connect(str(path), read_only=True)
    try:
        assert db.c.count_documents({}) == 4000
    finally:
        db.client.close()


def test_a_new_store_opened_by_two_writers_at_once_is_set_up_in_turn(tmp_path):
    """Two processes opening a new store at once both switch it to WAL, and SQLite
    refuses one at once (``database is locked``, seen when two ingests started
    together): a writer waits for the lock file's turn, then sets it up."""
    directory = tmp_path / "s"
    directory.mkdir()
    with open(directory / "write.lock", "ab") as other:        # another writer's turn
        fcntl.flock(other, fcntl.LOCK_EX)
        opened = []
        thread = threading.Thread(target=lambda: opened.append(EmbeddedStore(directory)))
        thread.start()
        time.sleep(0.3)
        assert opened == []
        fcntl.flock(other, fcntl.LOCK_UN)
        thread.join(30)
    assert len(opened) == 1
    opened[0].close()


def test_read_only_store_refuses_writes(tmp_path):
    db = queries.connect(str(tmp_path / "s"), read_only=True)
    try:
        with pytest.raises(StoreReadOnlyError, match="read-only"):
            db.counters.insert_one({"_id": 1})
        assert db.counters.find_one({"_id": 1}) is None
    finally:
        db.client.close()


def test_a_reading_threads_connection_closes_when_the_thread_ends(embedded_db):
    """Servers that start a thread per request (werkzeug) must not pile connections up."""
    store = embedded_db.client.store
    used = []

    def read():
        embedded_db.counters.find_one({"_id": "x"})
        used.append(weakref.ref(store.reader()))

    for _ in range(20):
        thread = threading.Thread(target=read)
        thread.start()
        thread.join()
    gc.collect()
    assert len(used) == 20 and all(ref() is None for ref in used)


CLOSE_WHILE_READING = """
import sys, threading
from pymongo.errors import DuplicateKeyError, InvalidOperation
import queries
db = queries.connect(sys.argv[1])
db.events.insert_many([{"_id": i, "site": "s", "n": i} for i in range(20_000)])
started, outcomes = threading.Barrier(5), []


def read():
    started.wait()
    try:
        while True:
            sum(doc["n"] for doc in db.events.find({"site": "s"}))
    except InvalidOperation:
        outcomes.append("refused")
readers = [threading.Thread(target=read) for _ in range(4)]
for thread in readers:
    thread.start()
started.wait()
db.client.close()
for thread in readers:
    thread.join(60)
print(",".join(sorted(outcomes)))
"""


def test_closing_the_store_while_other_threads_read_refuses_their_next_read(tmp_path):
    """A server thread may still be answering a request as its app closes the store:
    its read finishes or is refused, never a crash (closing a connection another thread
    is stepping through kills the process)."""
    for attempt in range(3):
        child = subprocess.run([sys.executable, "-c", CLOSE_WHILE_READING,
                                str(tmp_path / f"store{attempt}")], capture_output=True,
                               text=True, timeout=90)
        assert child.returncode == 0, child.stderr[-2000:]
        assert child.stdout.strip() == "refused,refused,refused,refused"


def test_bulk_loading_tunes_only_the_writer(embedded_db):
    store = embedded_db.client.store
    store.bulk_loading(cache_kb=123_456, wal_pages=7_777)
    writer = store._writer
    assert writer.execute("PRAGMA cache_size").fetchone()[0] == -123_456
    assert writer.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 7_777
    embedded_db.events.insert_many([{"_id": i, "n": i} for i in range(100)])
    assert embedded_db.events.count_documents({}) == 100


def test_writes_after_close_are_refused_like_reads(tmp_path):
    db = queries.connect(str(tmp_path / "store"))
    db.counters.insert_one({"_id": "x"})
    db.client.close()
    with pytest.raises(InvalidOperation):
        db.counters.insert_one({"_id": "y"})
    with pytest.raises(InvalidOperation):
        db.counters.find_one({"_id": "x"})


def test_a_write_transaction_holds_the_stores_write_queue_lock_until_it_ends(tmp_path):
    """Writers of other processes queue on ``write.lock`` (woken as it is released)
    rather than polling SQLite's lock."""
    db = queries.connect(str(tmp_path))
    store = db.client.store

    def held() -> bool:
        with open(tmp_path / "write.lock", "ab") as other:   # another open file: another
            try:                                             # holder, as a process is
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(other, fcntl.LOCK_UN)
            return False

    assert not held()
    with store.writing():
        db.things.insert_one({"_id": 1})
        assert held()
    assert not held()
    with pytest.raises(DuplicateKeyError):      # a failed write releases it too
        db.things.insert_one({"_id": 1})
    assert not held()
    db.client.close()
