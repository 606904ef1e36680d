"""The embedded store: thread safety, TTL expiry, compaction, read-only access."""

from __future__ import annotations

import datetime as dt
import threading

import pytest
from pymongo import ASCENDING, InsertOne, UpdateOne
from pymongo.errors import BulkWriteError, DuplicateKeyError

import queries
from queries.embedded import journal
from queries.embedded import store as store_module
from queries.errors import StoreReadOnlyError

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


def test_ttl_expiry(embedded_db):
    now = dt.datetime(2026, 11, 21, 12, tzinfo=UTC)
    coll = embedded_db.expiring
    coll.create_index([("ts", ASCENDING)], expireAfterSeconds=3600)
    coll.insert_many([{"ts": now - dt.timedelta(minutes=m)} for m in (10, 59, 61, 300)])
    store = embedded_db.client.store
    assert store.expire_ttl(now) == 2
    assert sorted(d["ts"] for d in coll.find()) == [
        now - dt.timedelta(minutes=59), now - dt.timedelta(minutes=10)]
    assert store.expire_ttl(now) == 0


def test_ttl_index_and_data_survive_reopen(tmp_path):
    path = str(tmp_path / "s")
    db = queries.connect(path)
    now = dt.datetime(2026, 11, 21, 12, tzinfo=UTC)
    db.expiring.create_index([("ts", ASCENDING)], expireAfterSeconds=60)
    db.expiring.insert_one({"ts": now})
    db.client.close()  # compacts into a snapshot
    db = queries.connect(path)
    try:
        assert "expireAfterSeconds" in db.expiring.index_information()["ts_1"]
        assert db.client.store.expire_ttl(now + dt.timedelta(seconds=61)) == 1
    finally:
        db.client.close()


def test_compaction_keeps_everything_and_replays_nothing_twice(tmp_path):
    path = tmp_path / "s"
    db = queries.connect(str(path))
    for _ in range(5):
        db.counters.update_one({"_id": "c"}, {"$inc": {"n": 1}}, upsert=True)
    db.client.store.compact()
    db.counters.update_one({"_id": "c"}, {"$inc": {"n": 10}})
    assert sorted(p.name for p in path.glob("*.bson")) == ["journal-1.bson", "snapshot.bson"]
    db.client.close()
    db = queries.connect(str(path))
    try:
        assert db.counters.find_one({"_id": "c"})["n"] == 15
    finally:
        db.client.close()


def test_bulk_write_reports_like_pymongo(embedded_db):
    coll = embedded_db.things
    coll.insert_one({"_id": 1})
    with pytest.raises(BulkWriteError) as caught:
        coll.bulk_write([InsertOne({"_id": 1}), InsertOne({"_id": 2}), InsertOne({"_id": 1})],
                        ordered=False)
    errors = caught.value.details["writeErrors"]
    assert [(e["index"], e["code"]) for e in errors] == [(0, 11000), (2, 11000)]
    assert caught.value.details["nInserted"] == 1
    with pytest.raises(BulkWriteError) as caught:
        coll.bulk_write([InsertOne({"_id": 3}), InsertOne({"_id": 3}), InsertOne({"_id": 4})])
    assert caught.value.details["nInserted"] == 1 and coll.find_one({"_id": 4}) is None
    result = coll.bulk_write([UpdateOne({"_id": 9}, {"$set": {"a": 1}}, upsert=True)])
    assert result.upserted_ids == {0: 9}
    with pytest.raises(DuplicateKeyError):
        coll.insert_one({"_id": 9})


def test_read_only_store_refuses_writes(tmp_path):
    db = queries.connect(str(tmp_path / "s"), read_only=True)
    try:
        with pytest.raises(StoreReadOnlyError, match="read-only"):
            db.counters.insert_one({"_id": 1})
    finally:
        db.client.close()


def test_a_reader_is_not_fooled_by_a_compaction_during_its_load(tmp_path, monkeypatch):
    """The writer compacts (journal G vanishes) between the reader's snapshot and journal
    reads: the reader must load again, not come up without the journal's writes."""
    path = tmp_path / "s"
    writer = queries.connect(str(path))
    try:
        writer.counters.insert_one({"_id": "c", "n": 1})
        real_read = journal.read_journal
        calls = []

        def compact_first(*args, **kwargs):
            if not calls:
                writer.client.store.compact()
            calls.append(args)
            return real_read(*args, **kwargs)

        monkeypatch.setattr(store_module.journal, "read_journal", compact_first)
        reader = queries.connect(str(path), read_only=True)
        assert reader.counters.find_one({"_id": "c"})["n"] == 1
        assert len(calls) == 2
        reader.client.close()
    finally:
        writer.client.close()


def test_capped_collection_keeps_the_newest_documents(tmp_path):
    db = queries.connect(str(tmp_path / "capped"))
    events = db["events"]
    base = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    events.insert_many([{"_id": i, "ingested": base + dt.timedelta(seconds=i)}
                        for i in range(120)])
    events.cap_documents(100, "ingested")
    removed = db.client.store.enforce_caps()
    assert removed == 30  # trimmed to 90% of the cap, oldest first
    assert sorted(doc["_id"] for doc in events.find({})) == list(range(30, 120))
    assert db.client.store.enforce_caps() == 0
    db.client.close()
