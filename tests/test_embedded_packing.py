"""The embedded store's compressed documents: a dictionary per collection trained on its
first documents, shared by processes, never used before it is committed, and stores
written before it read and updated as they were."""

from __future__ import annotations

import datetime as dt
import sqlite3
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import bson
import pytest
from bson import Binary, Int64, ObjectId
from pymongo import InsertOne, UpdateOne

import queries
from queries.store.embedded import packing
from queries.store.embedded.store import EmbeddedStore

UTC = dt.UTC
DAY = dt.datetime(2015, 5, 17, tzinfo=UTC)


def counter(i: int) -> dict:
    """A document shaped like a day's page counters."""
    hour = i % 24
    return {"_id": f"20150517/blog/page-{i}", "metadata": {
        "date": DAY, "site": "blog", "page": f"/articles/{i % 97}/page-{i}"},
        "daily": i % 7 + 1, "hourly": {str(hour): i % 7 + 1},
        "minute": {str(hour): {str(i % 60): i % 7 + 1}}}


def stored(store_dir, table: str) -> list[bytes]:
    con = sqlite3.connect(store_dir / "hitboard.sqlite3")
    try:
        return [doc for doc, in con.execute(f'SELECT doc FROM "hitboard.{table}"')]
    finally:
        con.close()


def dictionaries(store_dir) -> list[tuple[int, str]]:
    con = sqlite3.connect(store_dir / "hitboard.sqlite3")
    try:
        return con.execute("SELECT id, tbl FROM hb_dicts ORDER BY id").fetchall()
    finally:
        con.close()


@contextmanager
def reopened(store_dir):
    """The store as another process opens it afterwards: read-only, its own caches."""
    db = queries.connect(str(store_dir), read_only=True)
    try:
        yield db
    finally:
        db.client.close()


@pytest.fixture
def store_dir(tmp_path):
    return tmp_path / "store"


@pytest.fixture
def db(store_dir):
    database = queries.connect(str(store_dir))
    yield database
    database.client.close()


def test_a_collections_documents_are_stored_packed_and_read_back_as_written(db, store_dir):
    docs = [counter(i) for i in range(600)]
    db.counters.insert_many([dict(d) for d in docs])
    blobs = stored(store_dir, "counters")
    assert all(blob.startswith(packing.MAGIC) for blob in blobs)   # its own batch trained it
    assert sum(map(len, blobs)) < 0.4 * sum(len(bson.encode(d)) for d in docs)
    assert list(db.counters.find({}, sort=[("_id", 1)])) == sorted(docs,
                                                                   key=lambda d: d["_id"])
    assert dictionaries(store_dir) == [(1, "hitboard.counters")]


def test_every_bson_type_survives_packing(db):
    db.things.insert_many([counter(i) for i in range(300)])
    odd = {"_id": ObjectId(), "f": 1.5, "i64": Int64(2**40), "b": b"\x00\xff" * 40,
           "uuid": Binary(b"\x01" * 16, 4),
           "none": None, "t": True, "list": [1, "two", {"three": 3}],
           "when": dt.datetime(2020, 2, 29, 23, 59, 59, 123000, tzinfo=UTC),
           "text": "é€😀" * 30}
    db.things.insert_one(dict(odd))
    assert db.things.find_one({"_id": odd["_id"]}) == odd


def test_updates_splice_packed_documents_and_keep_them_packed(db, store_dir):
    db.counters.insert_many([counter(i) for i in range(300)])
    db.counters.bulk_write([UpdateOne({"_id": f"20150517/blog/page-{i}"},
                                      {"$inc": {"daily": 1, "hourly.23": 2,
                                                "minute.23.59": 2}}, upsert=True)
                            for i in range(0, 400, 2)], ordered=False)
    assert all(blob.startswith(packing.MAGIC) for blob in stored(store_dir, "counters"))
    assert db.counters.count_documents({}) == 350
    first = db.counters.find_one({"_id": "20150517/blog/page-0"})
    assert (first["daily"], first["hourly"], first["minute"]["23"]) == (
        2, {"0": 1, "23": 2}, {"59": 2})
    assert db.counters.find_one({"_id": "20150517/blog/page-398"}) == {
        "_id": "20150517/blog/page-398", "daily": 1, "hourly": {"23": 2},
        "minute": {"23": {"59": 2}}}


def test_a_store_written_without_packing_reads_and_updates_as_before(store_dir,
                                                                      monkeypatch):
    """A store made before documents were packed: its BSON rows read as they were, an
    update packs the document it rewrites, and the rest stay readable beside it."""
    with monkeypatch.context() as patch:
        patch.setattr(packing.Packer, "pack", lambda self, table, encoded: encoded)
        old = queries.connect(str(store_dir))
        old.counters.insert_many([counter(i) for i in range(400)])
        old.client.close()
    assert not any(b.startswith(packing.MAGIC) for b in stored(store_dir, "counters"))
    db = queries.connect(str(store_dir))
    try:
        assert db.counters.count_documents({"daily": 7}) == 57
        db.counters.insert_many([counter(i) for i in range(400, 700)])
        db.counters.update_one({"_id": "20150517/blog/page-5"}, {"$inc": {"daily": 10}})
        assert db.counters.find_one({"_id": "20150517/blog/page-5"})["daily"] == 16
        assert db.counters.find_one({"_id": "20150517/blog/page-6"}) == counter(6)
        assert db.counters.count_documents({}) == 700
    finally:
        db.client.close()
    blobs = stored(store_dir, "counters")
    assert 300 <= sum(b.startswith(packing.MAGIC) for b in blobs) < 700


def test_a_dictionary_trained_in_a_failed_transaction_is_never_used(store_dir):
    """The transaction that trained a dictionary rolls back: the dictionary goes with
    it, and later documents are not packed with it (they would be unreadable)."""
    store = EmbeddedStore(store_dir)
    client = queries.store.embedded.EmbeddedClient(store)
    coll = client["hitboard"].counters
    with pytest.raises(RuntimeError), store.writing():
        coll.insert_many([counter(i) for i in range(300)])
        assert dictionaries(store_dir) == []        # not committed: another view
        raise RuntimeError("the disk filled")
    coll.insert_one(counter(1000))
    coll.insert_many([counter(i) for i in range(300, 700)])
    client.close()
    with reopened(store_dir) as db:
        assert db.counters.count_documents({}) == 401
        assert db.counters.find_one({"_id": "20150517/blog/page-1000"}) == counter(1000)
    assert dictionaries(store_dir) == [(1, "hitboard.counters")]


WRITER = """
import sys, datetime as dt, queries
sys.path.insert(0, sys.argv[3])
from test_embedded_packing import counter
db = queries.connect(sys.argv[1])
start = int(sys.argv[2])
db.counters.insert_many([counter(i) for i in range(start, start + 400)])
db.client.close()
"""


def test_processes_share_one_dictionary_and_read_each_others_documents(store_dir):
    tests = str(Path(__file__).parent)
    for start in (0, 400):
        subprocess.run([sys.executable, "-c", WRITER, str(store_dir), str(start), tests],
                       check=True, timeout=120)
    assert dictionaries(store_dir) == [(1, "hitboard.counters")]
    with reopened(store_dir) as db:
        assert db.counters.count_documents({}) == 800
        assert db.counters.find_one({"_id": "20150517/blog/page-799"}) == counter(799)


def test_a_reader_opened_before_the_dictionary_loads_it_when_it_meets_it(store_dir):
    reader = queries.connect(str(store_dir), read_only=True)
    writer = EmbeddedStore(store_dir)
    try:
        assert reader.counters.find_one({}) is None
        queries.store.embedded.EmbeddedClient(writer)["hitboard"].counters.insert_many(
            [counter(i) for i in range(300)])
        assert reader.counters.find_one({"_id": "20150517/blog/page-299"}) == counter(299)
    finally:
        writer.close()
        reader.client.close()


def test_a_dictionary_that_cannot_be_trained_leaves_documents_bson(db, store_dir,
                                                                   monkeypatch):
    def refuse(*args, **kwargs):
        raise packing.zstandard.ZstdError("Src size is incorrect")

    monkeypatch.setattr(packing.zstandard, "train_dictionary", refuse)
    db.same.insert_many([counter(i) for i in range(300)])
    db.same.bulk_write([InsertOne(counter(i)) for i in range(300, 600)])
    assert not any(b.startswith(packing.MAGIC) for b in stored(store_dir, "same"))
    assert db.same.count_documents({}) == 600
    assert dictionaries(store_dir) == []


def test_a_few_large_documents_are_enough_to_train_on(db, store_dir):
    big = [{"_id": h, "v": {"referrer": {f"site-{h}-{j}%2Eexample": j for j in range(900)}}}
           for h in range(48)]
    db.dims.insert_many(big)
    db.dims.insert_one({"_id": 99, "v": {"referrer": {"x": 1}}, "pad": "y" * 4000})
    assert dictionaries(store_dir) == [(1, "hitboard.dims")]
    assert db.dims.find_one({"_id": 47}) == big[47]


def test_an_unknown_dictionary_is_a_clear_error(db, store_dir):
    db.counters.insert_many([counter(i) for i in range(300)])
    con = sqlite3.connect(store_dir / "hitboard.sqlite3")
    con.execute("DELETE FROM hb_dicts")
    con.commit()
    con.close()
    with reopened(store_dir) as fresh, pytest.raises(ValueError, match="dictionary 1"):
        fresh.counters.find_one({})


def test_collection_stats_give_the_bson_size_and_the_stored_size(db):
    docs = [counter(i) for i in range(300)]
    db.counters.insert_many(docs)
    stats = next(db.counters.aggregate([{"$collStats": {"storageStats": {}}}]))
    storage = stats["storageStats"]
    mean = sum(len(bson.encode(d)) for d in docs) / len(docs)
    assert storage["count"] == 300
    assert storage["size"] == pytest.approx(mean * 300, rel=0.1)
    assert storage["storageSize"] < 0.5 * storage["size"]


def test_a_large_document_is_compressed_before_its_collection_has_a_dictionary(db,
                                                                               store_dir):
    month = {"_id": "201505/blog", "visits": [{"page": f"/articles/{i % 97}", "n": i}
                                              for i in range(2_000)]}
    db.months.insert_one(month)
    db.months.insert_one({"_id": "small", "n": 1})
    big, small = stored(store_dir, "months")
    assert big.startswith(packing.MAGIC) and len(big) < len(bson.encode(month)) / 3
    assert packing.zstandard.get_frame_parameters(big).dict_id == 0
    assert not small.startswith(packing.MAGIC)
    assert dictionaries(store_dir) == []
    with reopened(store_dir) as fresh:
        assert fresh.months.find_one({"_id": "201505/blog"}) == month
    db.months.update_one({"_id": "201505/blog"}, {"$inc": {"n": 7}})
    assert db.months.find_one({"_id": "201505/blog"}) == {**month, "n": 7}
    assert stored(store_dir, "months")[0].startswith(packing.MAGIC)
