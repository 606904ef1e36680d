"""The rows the embedded store writes: TTL expiry, an index filled on existing
documents, pymongo's bulk-write reporting, a flush's new upserts inserted at once, and
bulk rows built as single ones are."""

from __future__ import annotations

import datetime as dt

import pytest
from pymongo import ASCENDING, InsertOne, UpdateOne
from pymongo.errors import BulkWriteError, DuplicateKeyError

UTC = dt.UTC


def test_ttl_expiry(embedded_db):
    now = dt.datetime(2026, 11, 21, 12, tzinfo=UTC)
    coll = embedded_db.expiring
    coll.create_index([("ts", ASCENDING)], expireAfterSeconds=3600)
    coll.insert_many([{"ts": now - dt.timedelta(minutes=m)} for m in (10, 59, 61, 300)])
    coll.insert_one({"ts": "not a date"})  # as on MongoDB: never expires
    store = embedded_db.client.store
    assert store.expire_ttl(now) == 2
    assert sorted(d["ts"] for d in coll.find({"ts": {"$lt": now}})) == [
        now - dt.timedelta(minutes=59), now - dt.timedelta(minutes=10)]
    assert store.expire_ttl(now) == 0
    assert coll.count_documents({}) == 3


@pytest.mark.parametrize("at_a_time", [10_000, 2])
def test_an_index_on_existing_documents_fills_its_columns(embedded_db, monkeypatch,
                                                          at_a_time):
    """Filled a few rows at a time (``FILL_ROWS``): every row, however many batches."""
    from queries.store.embedded import store

    monkeypatch.setattr(store, "FILL_ROWS", at_a_time)
    coll = embedded_db.later
    coll.insert_many([{"_id": i, "k": i % 3} for i in range(9)])
    coll.delete_one({"_id": 2})                # a gap in the row ids
    coll.create_index([("k", 1)])
    assert sorted(d["_id"] for d in coll.find({"k": 1})) == [1, 4, 7]
    assert coll.count_documents({"k": {"$gte": 1}}) == 5


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
    with pytest.raises(BulkWriteError) as caught:
        coll.insert_many([{"_id": 20}, {"_id": 9}, {"_id": 21}], ordered=False)
    assert caught.value.details["nInserted"] == 2
    assert coll.count_documents({"_id": {"$in": [20, 21]}}) == 2


def _guarded_upserts(seq: int, ids, inc=1) -> list[UpdateOne]:
    return [UpdateOne({"_id": i, "flushes.w": {"$ne": seq}},
                      {"$inc": {"daily": inc, f"hourly.{n % 3}": inc}, "$set": {"flushes.w": seq},
                       "$setOnInsert": {"metadata": {"page": f"/{i}"}}}, upsert=True)
            for n, i in enumerate(ids)]


def test_an_unordered_batch_of_upserts_inserts_its_new_documents_at_once(embedded_db):
    """The recorder's flush (unordered upserts of distinct _ids, mostly new documents)
    inserts the new ones in one statement: the same documents and report as one request
    at a time (an ordered batch), the guard still refusing a batch applied before, and a
    refused request reported as such."""
    fast, slow = embedded_db.fast, embedded_db.slow
    for coll in (fast, slow):
        coll.insert_one({"_id": "b", "daily": 5, "hourly": {"1": 5}, "flushes": {"w": 0}})
        coll.create_index([("metadata.page", ASCENDING)], name="page")
    batch = _guarded_upserts(1, ["a", "b", "c", "d"])
    got, want = fast.bulk_write(batch, ordered=False), slow.bulk_write(batch, ordered=True)
    assert got.bulk_api_result == want.bulk_api_result
    assert got.upserted_ids == {0: "a", 2: "c", 3: "d"}
    assert list(fast.find(sort=[("_id", 1)])) == list(slow.find(sort=[("_id", 1)]))
    assert fast.find_one({"metadata.page": "/c"})["daily"] == 1      # its index column too
    with pytest.raises(BulkWriteError) as caught:      # as MongoDB: applied before
        fast.bulk_write(_guarded_upserts(1, ["a", "e"]), ordered=False)
    assert [(e["index"], e["code"]) for e in caught.value.details["writeErrors"]] == [
        (0, 11000)]
    assert caught.value.details["upserted"] == [{"index": 1, "_id": "e"}]
    assert fast.find_one({"_id": "a"})["daily"] == 1                   # not applied twice
    with pytest.raises(BulkWriteError) as caught:
        fast.bulk_write(_guarded_upserts(2, ["f", "g"]) + _guarded_upserts(2, ["h"], inc="x"),
                        ordered=False)
    assert [e["index"] for e in caught.value.details["writeErrors"]] == [2]
    assert caught.value.details["nUpserted"] == 2 and fast.find_one({"_id": "h"}) is None


def test_bulk_insert_rows_match_single_document_rows(embedded_db):
    """documents._rows (the bulk fast path) builds exactly the rows _row builds."""
    from bson import ObjectId

    from queries.store.embedded import documents

    coll = embedded_db.things
    coll.create_index([("a", ASCENDING), ("t", ASCENDING)])
    coll.create_index([("n.x", ASCENDING), ("b", ASCENDING)])
    store = embedded_db.client.store
    info = store.collection(embedded_db.name, "things")
    when = dt.datetime(2015, 5, 17, 10, 5, tzinfo=UTC)
    docs = [{"_id": 1, "a": "x", "t": when, "n": {"x": 2.5}, "b": True},
            {"_id": "s", "a": None, "t": when.replace(tzinfo=None), "b": b"\x01"},
            {"_id": ObjectId(), "a": 7, "t": when + dt.timedelta(seconds=1), "n": {"x": "y"}},
            {"a": "no id", "t": when, "b": False}]
    rows = documents._rows(info, [dict(d) for d in docs])
    assert [documents._row(info, documents.with_id(d)) for d in docs[:3]] == rows[:3]
    assert rows[3][2:] == documents._row(info, {**docs[3], "_id": 0})[2:]
    coll.insert_many(docs)
    assert coll.count_documents({"t": when}) == 3     # a naive date is UTC
    assert coll.find_one({"n.x": "y"})["a"] == 7
