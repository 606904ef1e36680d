"""The counter collections' compact rows: keyed by their metadata, without ``_id`` or a
secondary index, the same documents through pymongo; a store written before is
converted on its first open."""

from __future__ import annotations

import datetime as dt
import sqlite3

import pytest
from pymongo import UpdateOne
from pymongo.errors import BulkWriteError, WriteError

import queries
from queries.stats import schema
from queries.store.embedded import layouts

UTC = dt.UTC
DAY = dt.datetime(2015, 5, 17, tzinfo=UTC)
MONTH = dt.datetime(2015, 5, 1, tzinfo=UTC)


def upsert(page: str, n: int, flush: int, day: dt.datetime = DAY, site: str = "blog"):
    """A recorder's guarded ``$inc`` of a day's and a month's documents."""
    return [(schema.DAILY, UpdateOne(
        {"_id": schema.daily_id(day, site, page), "flushes.w": {"$ne": flush}},
        {"$inc": {"daily": n, f"hourly.{n % 24}": n}, "$set": {"flushes.w": flush},
         "$setOnInsert": {"metadata": schema.metadata(day, site, page)}}, upsert=True)),
        (schema.MONTHLY, UpdateOne(
            {"_id": schema.monthly_id(MONTH, site, page), "flushes.w": {"$ne": flush}},
            {"$inc": {"monthly": n, f"daily.{day.day}": n}, "$set": {"flushes.w": flush},
             "$setOnInsert": {"metadata": schema.metadata(MONTH, site, page)}},
            upsert=True))]


def write(db, requests) -> None:
    for coll in (schema.DAILY, schema.MONTHLY):
        batch = [r for c, r in requests if c == coll]
        if batch:
            db[coll].bulk_write(batch, ordered=False)


def fill(db) -> None:
    queries.ensure_indexes(db)
    for flush in (1, 2):
        write(db, [r for i in range(40) for r in upsert(f"/p{i}", i + 1, flush)]
              + [r for r in upsert("*", 5, flush)])
    with pytest.raises(BulkWriteError):             # already applied: the guard's
        write(db, upsert("/p1", 3, 2))              # duplicate key, as MongoDB's
    write(db, upsert("/late", 1, 1, DAY + dt.timedelta(days=1)))


def snapshot(db) -> dict:
    return {coll: sorted(db[coll].find({}), key=lambda d: d["_id"])
            for coll in (schema.DAILY, schema.MONTHLY)}


def columns(store_dir, coll: str) -> list[str]:
    con = sqlite3.connect(store_dir / "hitboard.sqlite3")
    try:
        return [row[1] for row in con.execute(f'PRAGMA table_info("hitboard.{coll}")')]
    finally:
        con.close()


@pytest.fixture
def store_dir(tmp_path):
    return tmp_path / "store"


@pytest.fixture
def db(store_dir):
    database = queries.connect(str(store_dir))
    yield database
    database.client.close()


def test_counter_documents_read_back_as_written_through_every_read(db, store_dir):
    fill(db)
    daily = db[schema.DAILY]
    assert columns(store_dir, schema.DAILY) == [f"k:{p}" for p in layouts.PATHS] + ["doc"]
    one = daily.find_one({"_id": "20150517/blog/p3"})
    assert one == {"_id": "20150517/blog/p3", "metadata": schema.metadata(DAY, "blog", "/p3"),
                   "daily": 8, "hourly": {"4": 8}, "flushes": {"w": 2}}
    assert daily.find_one({"metadata.site": "blog", "metadata.page": "/p3"}) == one
    assert daily.count_documents({"_id": {"$in": ["20150517/blog/p3", "20150517/blog*",
                                                  "nonsense", 7, "20150517/blog/none"]}}) == 2
    assert daily.count_documents({"_id": {"$gte": "20150518"}}) == 1
    assert daily.find_one({"_id": "20150517/blog*"})["daily"] == 10
    assert list(daily.find({"metadata.page": "/late"}, {"_id": 1})) == [
        {"_id": "20150518/blog/late"}]
    assert daily.distinct("_id", {"metadata.page": {"$in": ["/p1", "/p2"]}}) == [
        "20150517/blog/p1", "20150517/blog/p2"]
    top = list(daily.aggregate([{"$match": {"metadata.site": "blog"}},
                                {"$group": {"_id": "$metadata.page",
                                            "hits": {"$sum": "$daily"}}}]))
    assert {g["_id"]: g["hits"] for g in top}["/p39"] == 80
    assert db[schema.MONTHLY].find_one({"_id": "201505/blog/late"})["daily"] == {"18": 1}
    assert daily.index_information()["site_page_date"]["key"] == [
        ("metadata.site", 1), ("metadata.page", 1), ("metadata.date", 1)]
    assert daily.delete_many({"_id": "20150518/blog/late"}).deleted_count == 1
    assert daily.delete_many({"daily": {"$gt": 70}}).deleted_count == 5
    assert daily.count_documents({}) == 36


def test_metadata_beyond_the_key_is_kept_and_a_foreign_id_refused(db):
    daily = db[schema.DAILY]
    doc = {"_id": "20150517/blog/x", "metadata": {"site": "blog", "page": "/x", "date": DAY,
                                                 "note": "kept"}, "daily": 1}
    daily.insert_one(doc)
    assert daily.find_one({"_id": "20150517/blog/x"}) == doc
    with pytest.raises(WriteError, match="metadata"):
        daily.insert_one({"_id": "20150517/blog/y", "metadata": schema.metadata(
            DAY, "blog", "/x"), "daily": 1})
    with pytest.raises(WriteError):
        daily.update_one({"_id": "20150517/blog/x"}, {"$set": {"metadata.page": "/z"}})
    assert daily.find_one({"_id": "20150517/blog/x"}) == doc


def test_a_store_of_the_rid_layout_is_converted_on_first_open(store_dir, monkeypatch):
    monkeypatch.setattr(layouts, "LAYOUTS", {})
    old = queries.connect(str(store_dir))
    fill(old)
    before = snapshot(old)
    old.client.close()
    assert "id" in columns(store_dir, schema.DAILY)
    monkeypatch.undo()
    db = queries.connect(str(store_dir))
    try:
        assert db.client.store.reader().execute("PRAGMA freelist_count").fetchone()[0] == 0
        assert columns(store_dir, schema.DAILY)[-1] == "doc"
        assert "id" not in columns(store_dir, schema.MONTHLY)
        assert snapshot(db) == before
        assert "site_page_date" in db[schema.DAILY].index_information()
        write(db, upsert("/p1", 3, 3))
        assert db[schema.DAILY].find_one({"_id": "20150517/blog/p1"})["daily"] == 7
    finally:
        db.client.close()


def test_id_look_ups_search_the_key_and_never_scan(db):
    fill(db)
    ids = [schema.daily_id(DAY, "blog", f"/p{i}") for i in range(30)] + [
        "20150518/blog/late"]
    plan = db.command("explain", {"find": schema.DAILY, "filter": {"_id": {"$in": ids}}},
                      verbosity="executionStats")
    steps = plan["queryPlanner"]["sqlitePlan"]
    assert any("USING PRIMARY KEY" in step for step in steps)
    assert not any(step.startswith("SCAN hitboard.stats.daily") for step in steps)
    assert plan["executionStats"]["nReturned"] == 31


def test_an_id_look_up_longer_than_a_statement_takes_is_split_never_scanned(db, monkeypatch):
    """``_id: {$in}`` past planner.MAX_IN parameters (3 a key: 3,334 ids) is looked up in
    parts that each fit, never read row by row through the matcher."""
    from queries.store.embedded import matcher, planner
    per = planner.MAX_IN // len(layouts.PATHS)
    docs = [{"_id": schema.daily_id(DAY, "blog", f"/p{i}"), "daily": i,
             "metadata": schema.metadata(DAY, "blog", f"/p{i}")} for i in range(per + 7)]
    db[schema.DAILY].insert_many(docs)
    ids = [doc["_id"] for doc in docs] + [docs[0]["_id"], "20150518/blog/absent"]
    monkeypatch.setattr(matcher, "matches", lambda *_: pytest.fail("a scan"))
    daily = db[schema.DAILY]
    assert sorted(d["daily"] for d in daily.find({"_id": {"$in": ids}})) == list(
        range(per + 7))
    assert {d["_id"] for d in daily.find({"_id": {"$in": ids}}, {"_id": 1})} == {
        doc["_id"] for doc in docs}
    assert daily.count_documents({"_id": {"$in": ids}}) == per + 7
    assert len(list(daily.find({"_id": {"$in": ids}}, limit=per + 2))) == per + 2


def test_an_unordered_bulk_write_inserts_its_documents_at_once_and_reports_each_refusal(db):
    """A flush's new counter documents (``InsertOne``s beside its ``$inc`` upserts) go in
    with one statement; a duplicate among them is reported at its own index."""
    from pymongo import InsertOne
    daily = db[schema.DAILY]

    def doc(page: str, n: int) -> dict:
        return {"_id": schema.daily_id(DAY, "blog", page), "daily": n,
                "metadata": schema.metadata(DAY, "blog", page)}

    daily.insert_one(doc("/old", 1))
    requests = [InsertOne(doc("/a", 2)), InsertOne(doc("/old", 9)), InsertOne(doc("/b", 3)),
                upsert("/old", 4, 1)[0][1]]
    with pytest.raises(BulkWriteError) as raised:
        daily.bulk_write(requests, ordered=False)
    details = raised.value.details
    assert [(e["index"], e["code"]) for e in details["writeErrors"]] == [(1, 11000)]
    assert details["nInserted"] == 2 and details["nModified"] == 1
    assert {d["_id"][9:]: d["daily"] for d in daily.find()} == {
        "blog/a": 2, "blog/b": 3, "blog/old": 5}
