"""The journal and snapshot files: torn tails are cut, and a crash at any step of a
compaction leaves a store that opens with every write exactly once."""

from __future__ import annotations

import fcntl
import shutil

import bson

import queries
from queries.embedded import journal


def _records(path):
    return [r["i"] for r in journal.read_journal(path)]


def test_torn_tail_is_cut_and_later_appends_stay_readable(tmp_path):
    path = journal.journal_path(tmp_path, 0)
    writer = journal.JournalWriter(path)
    for i in range(3):
        writer.append({"i": i})
    writer.close()
    whole = path.read_bytes()
    path.write_bytes(whole + bson.encode({"i": 3})[:-5])  # a crash mid-append
    assert list(r["i"] for r in journal.read_journal(path, repair=False)) == [0, 1, 2]
    assert path.stat().st_size > len(whole)  # a reader leaves a live journal alone
    assert _records(path) == [0, 1, 2]
    assert path.read_bytes() == whole
    writer = journal.JournalWriter(path)
    writer.append({"i": 4})
    writer.close()
    assert _records(path) == [0, 1, 2, 4]


def test_zero_filled_tail_after_power_loss_is_cut(tmp_path):
    path = journal.journal_path(tmp_path, 0)
    writer = journal.JournalWriter(path, fsync=True)
    writer.append({"i": 0})
    writer.close()
    with path.open("ab") as handle:
        handle.write(b"\x00" * 64)
    assert _records(path) == [0]


def _store_with_counter(path, increments):
    db = queries.connect(str(path))
    for _ in range(increments):
        db.counters.update_one({"_id": "c"}, {"$inc": {"n": 1}}, upsert=True)
    return db


def _count(path):
    db = queries.connect(str(path))
    try:
        return db.counters.find_one({"_id": "c"})["n"]
    finally:
        db.client.close()


def _crash(db):
    """Leave the directory as a killed process would: no close, no compaction."""
    store = db.client.store
    store._journal.close()
    store.closed = True
    store._stop.set()
    fcntl.flock(store._lock_file.fileno(), fcntl.LOCK_UN)


def test_crash_before_the_new_snapshot_is_renamed(tmp_path):
    path = tmp_path / "s"
    db = _store_with_counter(path, 4)
    _crash(db)
    (path / (journal.SNAPSHOT + ".tmp")).write_bytes(b"half a snapshot")
    assert _count(path) == 4


def test_crash_after_the_rename_before_the_old_journal_is_deleted(tmp_path):
    path = tmp_path / "s"
    db = _store_with_counter(path, 4)
    old_journal = journal.journal_path(path, 0)
    kept = tmp_path / "journal-0.kept"
    shutil.copy(old_journal, kept)
    db.client.store.compact()
    db.counters.update_one({"_id": "c"}, {"$inc": {"n": 1}})
    _crash(db)
    shutil.copy(kept, old_journal)  # as if the crash came before its deletion
    assert _count(path) == 5  # journal 0 is not replayed over snapshot 1
    assert not old_journal.exists()  # and is cleaned up on open


def test_crash_after_the_rename_before_the_new_journal_exists(tmp_path):
    path = tmp_path / "s"
    db = _store_with_counter(path, 3)
    db.client.store.compact()
    _crash(db)
    journal.journal_path(path, 1).unlink()
    assert _count(path) == 3
