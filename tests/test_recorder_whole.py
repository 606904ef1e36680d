"""On the embedded store a flush inserts the counter documents the store does not hold
yet whole (one bulk insert) and sends the guarded ``$inc`` upsert to the others; a
document another writer inserts between the look-up and the insert is added to, never
overwritten. (MongoDB takes the upserts as before: tests/test_recorder.py.)"""

from __future__ import annotations

import datetime as dt
import multiprocessing

from fakes import UnseenDatabase, WrappedDB
from pymongo import InsertOne, UpdateOne
from reference import counters, expected_counters

import queries
from queries.counting.whole import inserted
from queries.stats import schema

UTC = dt.UTC
T0 = dt.datetime(2026, 11, 21, 10, 5, tzinfo=UTC)
IDLE = 3600
HITS = [(T0, "s1", "/a", 3), (T0 + dt.timedelta(minutes=7), "s1", "/b", 2),
        (T0 + dt.timedelta(days=1), "s1", "/a", 1)]


class Kinds:
    """A fault that lets a bulk write through and notes its requests' kinds."""

    def __init__(self):
        self.seen: list[tuple[str, str]] = []

    def __call__(self, collection, requests, ordered):
        self.seen += [(collection.name, type(r).__name__) for r in requests]
        return collection.bulk_write(requests, ordered=ordered)


def _record(recorder, hits) -> None:
    for ts, site, page, n in hits:
        recorder.record(site, page, ts, n=n)


def test_new_documents_go_in_whole_and_stored_ones_take_the_inc(embedded_db):
    db = embedded_db
    kinds = Kinds()
    wrapped = WrappedDB(db, [kinds] * 4)
    with queries.HitRecorder(wrapped, flush_interval=IDLE) as recorder:
        _record(recorder, HITS)
        recorder.flush()
        first = list(kinds.seen)
        _record(recorder, HITS)
        recorder.flush()
    assert first and {kind for _, kind in first} == {InsertOne.__name__}
    assert {kind for _, kind in kinds.seen[len(first):]} == {UpdateOne.__name__}
    assert counters(db) == expected_counters(HITS + HITS)


def test_a_document_another_writer_inserts_first_is_added_to(embedded_db):
    """The look-up misses documents another writer has inserted (a race, made certain):
    their inserts fail with a duplicate key and are sent again as the ``$inc``."""
    db = embedded_db
    with queries.HitRecorder(db, flush_interval=IDLE) as other:
        _record(other, HITS)
        other.flush()
    kinds = Kinds()
    wrapped = WrappedDB(UnseenDatabase(db), [kinds] * 4)
    with queries.HitRecorder(wrapped, flush_interval=IDLE) as recorder:
        _record(recorder, HITS)
        recorder.flush()
        assert recorder.status().failures == 0
    assert counters(db) == expected_counters(HITS + HITS)
    daily = [kind for coll, kind in kinds.seen if coll == schema.DAILY]
    assert daily == [InsertOne.__name__] * 5 + [UpdateOne.__name__] * 5   # 3 pages, 2 days


def _write_many(store: str, page: str, start, rounds: int) -> None:
    start.wait()
    db = queries.connect(store)
    with queries.HitRecorder(db, flush_interval=IDLE) as recorder:
        for i in range(rounds):
            recorder.record("s1", page, T0 + dt.timedelta(minutes=i % 5))
            recorder.record("s1", "/shared", T0 + dt.timedelta(days=i % 3))
            recorder.flush()


def test_processes_inserting_the_same_documents_lose_no_count(tmp_path):
    """Two processes race to create the same documents (their own pages' and the
    shared ones, flush after flush): every hit is counted once."""
    store, rounds = str(tmp_path / "store"), 40
    queries.connect(store).client.close()
    context = multiprocessing.get_context("fork")
    start = context.Barrier(2)
    workers = [context.Process(target=_write_many, args=(store, page, start, rounds))
               for page in ("/p", "/q")]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    hits = [(T0 + dt.timedelta(minutes=i % 5), "s1", page, 1)
            for page in ("/p", "/q") for i in range(rounds)]
    hits += [(T0 + dt.timedelta(days=i % 3), "s1", "/shared", 1)
             for _ in range(2) for i in range(rounds)]
    assert counters(queries.connect(store)) == expected_counters(hits)


def test_the_whole_document_is_the_upserts():
    meta = {"date": T0, "site": "s", "page": "/a"}
    doc = inserted("x", {"daily": 2, "minute.10.5": 2, "hourly.10": 2, "bots.daily": 0},
                   {"flushes.w": 7, "owners.o": 1}, meta)
    assert doc == {"_id": "x", "daily": 2, "minute": {"10": {"5": 2}},
                   "hourly": {"10": 2}, "bots": {"daily": 0}, "flushes": {"w": 7},
                   "owners": {"o": 1}, "metadata": meta}
    assert list(doc) == ["_id", "daily", "minute", "hourly", "bots", "flushes", "owners",
                         "metadata"]
    # What the upsert refuses or applies otherwise is left to it.
    for inc in ({"a": 1, "a.b": 1}, {"a.b": 1, "a": 1}, {"a": 1.5}, {"a": True},
                {"a..b": 1}, {"$a": 1}, {"_id.x": 1}, {"metadata.x": 1}):
        assert inserted("x", inc, {}, meta) is None
    assert inserted("x", {"a": 1}, {"a": 2}, meta) is None
