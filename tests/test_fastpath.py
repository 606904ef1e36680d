"""The embedded store's indexes answer exactly what a full scan answers."""

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

import queries
from queries.embedded import fastpath

SITES = st.sampled_from(["a", "b", "c"])
PAGES = st.sampled_from(["/", "/x", "/y.z", "/$p"])
VALUES = st.one_of(SITES, st.lists(SITES, max_size=2), st.none(), st.integers(0, 2),
                   st.booleans(), st.just(1.0))
DOCS = st.lists(st.fixed_dictionaries({"site": VALUES, "path": PAGES, "n": st.integers(0, 3)}),
                max_size=25)
FILTERS = st.one_of(
    st.fixed_dictionaries({"site": SITES}),
    st.fixed_dictionaries({"site": SITES, "path": PAGES}),
    st.fixed_dictionaries({"site": SITES, "path": st.fixed_dictionaries(
        {"$in": st.lists(PAGES, max_size=3)})}),
    st.fixed_dictionaries({"site": SITES, "path": st.fixed_dictionaries({"$ne": PAGES})}),
    st.fixed_dictionaries({"site": st.none(), "n": st.integers(0, 3)}),
    st.fixed_dictionaries({"site": st.sampled_from([1, True, 1.0, None])}),
    st.fixed_dictionaries({"site": SITES, "path": st.fixed_dictionaries(
        {"$in": st.lists(st.one_of(PAGES, st.none()), max_size=3)})}),
)
UPDATES = st.lists(st.tuples(SITES, st.sampled_from(["site", "path", "n"]), VALUES), max_size=5)


def _scan(collection, filter):
    engine = collection._engine()
    return sorted(doc["_id"] for doc in fastpath._original_iter(engine, filter))


@settings(max_examples=60, deadline=None)
@given(docs=DOCS, updates=UPDATES, deletes=st.lists(SITES, max_size=2), filters=st.lists(
    FILTERS, min_size=1, max_size=4))
def test_index_answers_what_a_scan_answers(tmp_path_factory, docs, updates, deletes, filters):
    db = queries.connect(str(tmp_path_factory.mktemp("store")))
    try:
        events = db["events"]
        if docs:
            events.insert_many([dict(doc, _id=i) for i, doc in enumerate(docs)])
        events.create_index([("site", 1), ("path", 1), ("time", -1)])
        for filter in filters:
            assert sorted(d["_id"] for d in events.find(filter, {"_id": 1})) == _scan(
                events, filter)
        for site, field, value in updates:
            events.update_many({"site": site}, {"$set": {field: value}})
            for filter in filters:
                assert sorted(d["_id"] for d in events.find(filter)) == _scan(events, filter)
        for site in deletes:
            events.delete_many({"site": site})
        events.insert_one({"_id": 999, "site": "a", "path": "/x", "time": dt.datetime.now(dt.UTC)})
        for filter in filters:
            assert sorted(d["_id"] for d in events.find(filter, {"_id": 1})) == _scan(
                events, filter)
    finally:
        db.client.close()


def test_id_lookup_does_not_scan(tmp_path, monkeypatch):
    db = queries.connect(str(tmp_path / "store"))
    db["c"].insert_many([{"_id": f"k{i}", "v": i} for i in range(50)])
    def scan(*_):
        raise AssertionError("scanned")

    monkeypatch.setattr(fastpath, "_original_iter", scan)
    assert db["c"].find_one({"_id": "k7"})["v"] == 7
    assert db["c"].find_one({"_id": "missing"}) is None
    monkeypatch.undo()
    db.client.close()


@settings(max_examples=60, deadline=None)
@given(times=st.lists(st.integers(0, 20), max_size=40), limit=st.integers(1, 8),
       skip=st.integers(0, 3), direction=st.sampled_from([1, -1]))
def test_sorted_limited_reads_equal_a_full_sort(tmp_path_factory, times, limit, skip, direction):
    db = queries.connect(str(tmp_path_factory.mktemp("store")))
    try:
        base = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
        if times:
            db["events"].insert_many([{"_id": f"e{i}", "site": "s", "time":
                                       base + dt.timedelta(seconds=t)}
                                      for i, t in enumerate(times)])
        cursor = db["events"].find({"site": "s"}).sort("time", direction).skip(skip).limit(limit)
        got = [doc["_id"] for doc in cursor]
        everything = db["events"]._engine().find({"site": "s"}).sort("time", direction)
        assert got == [doc["_id"] for doc in everything][skip:skip + limit]
    finally:
        db.client.close()
