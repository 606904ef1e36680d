"""log_hit (the use case's direct writes), the recorder's coalesced increments, and
preallocate (zero documents that never grow)."""

from __future__ import annotations

import datetime as dt

from reference import counters, expected_counters

import queries
from queries.stats import schema, writes

UTC = dt.UTC


def test_log_hit_writes_the_storage_contract(db):
    ts = dt.datetime(2026, 11, 21, 13, 45, 10, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    queries.log_hit(db, ts, "site-1", "index.html")
    doc = db[schema.DAILY].find_one({"_id": "20261121/site-1/index.html"})
    assert doc == {"_id": "20261121/site-1/index.html",
                   "metadata": {"date": dt.datetime(2026, 11, 21, tzinfo=UTC),
                                "site": "site-1", "page": "/index.html"},
                   "daily": 1, "hourly": {"12": 1}, "minute": {"12": {"45": 1}},
                   "bots": {"daily": 0}}
    month = db[schema.MONTHLY].find_one({"_id": "202611/site-1/index.html"})
    assert month["monthly"] == 1 and month["daily"] == {"21": 1}
    assert month["bots"] == {"monthly": 0}
    assert month["metadata"]["date"] == dt.datetime(2026, 11, 1, tzinfo=UTC)
    assert db[schema.DAILY].find_one({"_id": "20261121/site-1*"})["daily"] == 1
    assert db[schema.MONTHLY].find_one({"_id": "202611/site-1*"})["monthly"] == 1


def test_a_bot_hit_is_counted_again_under_bots(db):
    ts = dt.datetime(2026, 11, 21, 12, 45, tzinfo=UTC)
    queries.log_hit(db, ts, "site-1", "/a", bot=True)
    queries.log_hit(db, ts, "site-1", "/a")
    for doc_id in ("20261121/site-1/a", "20261121/site-1*"):
        doc = db[schema.DAILY].find_one({"_id": doc_id})
        assert doc["daily"] == 2 and doc["minute"] == {"12": {"45": 2}}
        assert doc["bots"] == {"daily": 1, "hourly": {"12": 1}, "minute": {"12": {"45": 1}}}
    month = db[schema.MONTHLY].find_one({"_id": "202611/site-1/a"})
    assert month["bots"] == {"monthly": 1, "daily": {"21": 1}}


def test_pages_with_dots_and_dollars_are_values(db):
    ts = dt.datetime(2026, 11, 21, 1, 2, tzinfo=UTC)
    for page in ("/a.b", "/$set", "/x.$y"):
        queries.log_hit(db, ts, "s.1", page)
    assert sorted(d["metadata"]["page"] for d in db[schema.DAILY].find()) == \
        ["*", "/$set", "/a.b", "/x.$y"]
    assert queries.list_pages(db, "s.1") == ["/$set", "/a.b", "/x.$y"]


def test_preallocated_documents_are_zero_filled(db):
    queries.preallocate(db, dt.date(2028, 2, 10), "s1", "/a")
    day = db[schema.DAILY].find_one({"_id": "20280210/s1/a"})
    assert day["daily"] == 0 and day["metadata"]["page"] == "/a"
    assert day["hourly"] == {str(h): 0 for h in range(24)}
    assert day["minute"] == {str(h): {str(m): 0 for m in range(60)} for h in range(24)}
    month = db[schema.MONTHLY].find_one({"_id": "202802/s1/a"})
    assert month["daily"] == {str(d): 0 for d in range(1, 30)}  # a leap February
    assert db[schema.DAILY].count_documents({}) == 2  # the page and "*"


def test_preallocate_never_overwrites_counts(db):
    ts = dt.datetime(2026, 11, 21, 5, 6, tzinfo=UTC)
    queries.log_hit(db, ts, "s1", "/a")
    queries.preallocate(db, ts, "s1", "/a")
    queries.preallocate(db, dt.datetime(2026, 11, 22, 9, tzinfo=UTC), "s1", "/a")
    queries.log_hit(db, dt.datetime(2026, 11, 22, 0, 1, tzinfo=UTC), "s1", "/a")
    queries.preallocate(db, dt.date(2026, 11, 22), "s1", "/a")
    hits = [(ts, "s1", "/a", 1), (dt.datetime(2026, 11, 22, 0, 1, tzinfo=UTC), "s1", "/a", 1)]
    assert counters(db) == expected_counters(hits)
    assert len(db[schema.DAILY].find_one({"_id": "20261122/s1/a"})["minute"]["23"]) == 60


def test_increments_coalesce_minute_counts_into_each_documents_inc():
    docs = writes.increments({("s", "/a", 2026, 11, 21): {0: 2, 61: 1},
                              ("s", "/b", 2026, 11, 21): {0: 4}},
                             bots={("s", "/b", 2026, 11, 21): {0: 3}})
    day = dt.datetime(2026, 11, 21, tzinfo=dt.UTC)
    month = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    pages = ("/a", "/b", "*")
    assert set(docs) == ({(schema.DAILY, schema.daily_id(day, "s", p)) for p in pages}
                         | {(schema.MONTHLY, schema.monthly_id(month, "s", p)) for p in pages})
    whole = docs[(schema.DAILY, schema.daily_id(day, "s", "*"))]
    assert whole.inc == {"minute.0.0": 6, "minute.1.1": 1, "hourly.0": 6, "hourly.1": 1,
                         "daily": 7, "bots.minute.0.0": 3, "bots.hourly.0": 3,
                         "bots.daily": 3}
    assert whole.metadata == schema.metadata(day, "s", "*")
    assert docs[(schema.MONTHLY, schema.monthly_id(month, "s", "/a"))].inc == {
        "monthly": 3, "daily.21": 3, "bots.monthly": 0}
    assert docs[(schema.MONTHLY, schema.monthly_id(month, "s", "/b"))].inc == {
        "monthly": 4, "daily.21": 4, "bots.monthly": 3, "bots.daily.21": 3}
