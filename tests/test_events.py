"""The events collection: indexes, retention, bulk writes that report failures, the
keyed writes of log ingests, and the move of an older store's events into buckets."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest
from bson import ObjectId
from fakes import stored_count, stored_events
from pymongo.errors import AutoReconnect, BulkWriteError

import queries
from queries.events import collection as events
from queries.events import upgrade
from queries.events.writer import EventWriter
from queries.ingest.logformat import columns, parse_line
from queries.rollups.build import run_rollups
from queries.stats import schema

T0 = dt.datetime(2015, 5, 17, 10, tzinfo=dt.UTC)


def test_indexes_serve_time_ranges_rollups_expiry_and_resumed_ingests(db):
    info = db[schema.EVENTS].index_information()
    keys = {name: [tuple(k) for k in spec["key"]] for name, spec in info.items()}
    assert keys["site_end"] == [("site", 1), ("end", 1), ("_id", 1), ("start", 1)]
    assert keys[events.INGESTED_INDEX] == [("ingested", 1)]
    assert keys["stream_first"] == [("stream", 1), ("first", 1)]
    assert not any("expireAfterSeconds" in spec for spec in info.values())


def _old_event(i: int, site: str = "s", ingested: int = 0) -> dict:
    return {"_id": ObjectId(f"{i:024x}"), "site": site, "path": f"/p{i % 3}",
            "time": T0 + dt.timedelta(minutes=20 * i), "host": "h", "status": 200, "bytes": i,
            "ingested": T0 + dt.timedelta(days=ingested)}


def test_an_older_stores_events_move_into_buckets_on_open(db, monkeypatch):
    old = [_old_event(i, site="a" if i % 2 else "b", ingested=i // 5) for i in range(12)]
    db[upgrade.OLD].insert_many([dict(doc) for doc in old])
    db[upgrade.OLD].insert_one({"_id": "not-an-event", "note": "kept"})
    monkeypatch.setattr(upgrade, "BATCH", 4)
    assert upgrade.move_old_events(db) == 12
    moved = stored_events(db)
    assert sorted((e["site"], e["time"], e["path"], e["bytes"]) for e in moved) == sorted(
        (e["site"], e["time"], e["path"], e["bytes"]) for e in old)
    # Each bucket keeps its events' ingestion stamp: the rollups and expiry see them as before.
    stamps = {(b["site"], b["ingested"]) for b in db[schema.EVENTS].find()}
    assert stamps == {(e["site"], e["ingested"]) for e in old}
    assert [d["_id"] for d in db[upgrade.OLD].find()] == ["not-an-event"]


def test_moving_old_events_again_after_a_kill_stores_each_once(db, monkeypatch):
    old = [_old_event(i) for i in range(10)]
    db[upgrade.OLD].insert_many([dict(doc) for doc in old])
    monkeypatch.setattr(upgrade, "BATCH", 4)
    real_delete = type(db[upgrade.OLD]).delete_many
    calls = []

    def killed_after_the_first_insert(self, *args, **kwargs):
        calls.append(1)
        raise KeyboardInterrupt("killed between a batch's buckets and its deletion")

    monkeypatch.setattr(type(db[upgrade.OLD]), "delete_many", killed_after_the_first_insert)
    with pytest.raises(KeyboardInterrupt):
        upgrade.move_old_events(db)
    assert calls and stored_count(db) == 4            # the first batch's buckets only
    monkeypatch.setattr(type(db[upgrade.OLD]), "delete_many", real_delete)
    queries.ensure_indexes(db)                         # the next open moves the rest
    assert stored_count(db) == 10 and upgrade.OLD not in db.list_collection_names()
    assert sorted(e["time"] for e in stored_events(db)) == [e["time"] for e in old]


def _two_events(db, now):
    for at in (now - dt.timedelta(days=31), now - dt.timedelta(days=1)):
        writer = EventWriter(db, clock=lambda at=at: at)
        writer.add({"time": dt.datetime(2015, 5, 17, tzinfo=dt.UTC), "site": "s", "path": "/"})
        writer.flush()


def test_expiry_counts_from_ingestion_and_waits_for_the_rollups(db):
    now = dt.datetime(2026, 11, 21, tzinfo=dt.UTC)
    _two_events(db, now)
    # The rollups have read nothing yet: nothing leaves, however old.
    assert events.expire(db, 30, rolled_up_until=now - dt.timedelta(days=40), now=now) == 0
    # Read up to now: only the event ingested 31 days ago leaves (its 2015 time is no age).
    assert events.expire(db, 30, rolled_up_until=now, now=now) == 1
    assert stored_count(db) == 1
    with pytest.raises(queries.HitboardError, match="retention"):
        events.expire(db, 0, rolled_up_until=now, now=now)


def test_a_rollup_run_expires_what_it_has_read(embedded_db, frozen_clock):
    now = dt.datetime.now(dt.UTC)
    _two_events(embedded_db, now)
    run = run_rollups(embedded_db, now=now + dt.timedelta(minutes=5), retention=30)
    assert run.expired == 1
    assert stored_count(embedded_db) == 1


def test_log_lines_are_written_as_the_events_they_are(embedded_db):
    lines = ['::1 - - [17/May/2015:10:05:03 +0200] "GET /a?b=1 HTTP/1.1" - - "-" "ua"',
             '10.0.0.1 - - [17/May/2015:10:05:04 +0200] "POST /c HTTP/1.0" 404 7 '
             '"http://r.example/" "-"']
    records = columns([parse_line(line) for line in lines])
    writer = EventWriter(embedded_db, keyed=True)
    assert writer.write_lines(records, ["demo", "demo"], 7, [0, 80]) == 0
    assert writer.totals.written == 2
    stored = [{k: v for k, v in event.items() if k != "_id"}
              for event in stored_events(embedded_db)]
    at = dt.datetime(2015, 5, 17, 8, 5, 3, tzinfo=dt.UTC)
    assert stored == [               # fields without a value ("-") are left out
        {"time": at, "site": "demo", "host": "::1", "method": "GET", "path": "/a",
         "query": "b=1", "bytes": 0, "user_agent": "ua"},
        {"time": at + dt.timedelta(seconds=1), "site": "demo", "host": "10.0.0.1",
         "method": "POST", "path": "/c", "query": "", "status": 404, "bytes": 7,
         "referrer": "http://r.example/"}]
    assert writer.write_lines(records, ["demo", "demo"], 7, [0, 80]) == 0   # same place
    assert writer.totals.present == 2 and len(stored_events(embedded_db)) == 2


def _at(minute: int) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minute)


def test_partial_bulk_failure_is_counted_never_silent(db, monkeypatch):
    writer = EventWriter(db)
    real = writer.collection.insert_many

    def second_bucket_refused(docs, ordered=True):
        real(docs[:1], ordered=ordered)
        raise BulkWriteError({"writeErrors": [{"index": 1, "code": 6, "errmsg": "unreachable"}],
                              "writeConcernErrors": [], "nInserted": 1})

    monkeypatch.setattr(writer.collection, "insert_many", second_bucket_refused)
    for i in range(5):
        writer.add({"site": "a" if i < 2 else "b", "time": _at(i), "path": "/"})
    assert writer.flush() == 3
    assert (writer.totals.written, writer.totals.failed) == (2, 3)
    assert "3 of 5 events refused: unreachable" in writer.totals.errors[0]
    assert stored_count(db) == 2


def test_an_event_without_a_site_or_time_is_refused_at_once(embedded_db):
    writer = EventWriter(embedded_db)
    for bad in ({"site": "s"}, {"time": _at(0)}, {"site": 7, "time": _at(0)}):
        with pytest.raises(ValueError, match="a site and a time"):
            writer.add(bad)
    assert writer.pending() == 0
    writer.add({"site": "s", "time": pd.Timestamp(_at(1))})    # a datetime all the same
    writer.flush()
    assert [e["time"] for e in stored_events(embedded_db)] == [_at(1)]


def test_keyed_events_written_again_are_present_not_failed(db):
    stream = events.stream_key("w:1")
    assert stream != events.stream_key("w:2")
    first = EventWriter(db, keyed=True)
    for offset in (0, 90):
        first.add({"site": "s", "time": _at(offset), "path": "/"}, (stream, offset))
    assert first.flush() == 0 and first.totals.written == 2
    again = EventWriter(db, keyed=True)             # the same chunk mapped again
    for offset in (0, 90):
        again.add({"site": "s", "time": _at(offset), "path": "/"}, (stream, offset))
    assert again.flush() == 0
    assert (again.totals.written, again.totals.present, again.totals.failed) == (0, 2, 0)
    assert stored_count(db) == 2
    with pytest.raises(ValueError, match="stream, offset"):
        again.add({"site": "s", "time": _at(0)})


def test_a_resumed_pass_forgets_the_events_past_where_it_resumes(db):
    stream, other = events.stream_key("w:1"), events.stream_key("w:2")
    writer = EventWriter(db, keyed=True, batch_size=2)   # buckets at offsets 0, 200, 400
    for offset in range(0, 600, 100):
        writer.add({"site": "s", "time": _at(offset // 100), "path": "/"}, (stream, offset))
    writer.add({"site": "s", "time": _at(0), "path": "/"}, (other, 200))
    writer.flush()
    assert events.forget(db, stream, 200) == 2        # the buckets from byte 200 on
    assert sorted(e["time"] for e in stored_events(db)) == [_at(0), _at(0), _at(1)]


def test_a_writer_without_a_thread_writes_each_batch_as_it_fills(embedded_db):
    writer = EventWriter(embedded_db, batch_size=3, max_pending=3)
    for second in range(7):          # more than max_pending: full batches leave at once
        writer.add({"site": "s", "time": _at(second)})
    assert (stored_count(embedded_db), writer.pending()) == (6, 1)
    writer.flush()
    assert stored_count(embedded_db) == 7 and writer.totals.written == 7
    keyed = EventWriter(embedded_db, keyed=True)
    with pytest.raises(ValueError, match="stream, offset"):
        keyed.add({"site": "s", "time": _at(0)})
    with pytest.raises(ValueError, match="keyed event writer"):
        writer.write_lines({}, [], 1, [])


def test_a_lost_connection_counts_the_whole_batch_failed(embedded_db, monkeypatch):
    writer = EventWriter(embedded_db)
    monkeypatch.setattr(writer.collection, "insert_many",
                        lambda *a, **k: (_ for _ in ()).throw(AutoReconnect("gone")))
    writer.add({"site": "s", "time": _at(0)})
    writer.add({"site": "s", "time": _at(1)})
    assert writer.flush() == 2 and writer.totals.failed == 2
    assert "AutoReconnect" in writer.totals.errors[0]


def test_write_concern_and_background_flush(embedded_db):
    with pytest.raises(queries.HitboardError, match="write concern"):
        EventWriter(embedded_db, concern="2")
    writer = EventWriter(embedded_db, concern="majority", flush_interval=0.05)
    writer.add({"site": "s", "path": "/", "time": _at(0)})
    for _ in range(200):
        if stored_count(embedded_db):
            break
        writer._stop.wait(0.01)
    writer.close()
    assert stored_count(embedded_db) == 1
    bounded = EventWriter(embedded_db, max_pending=1, flush_interval=3600)
    bounded.add({"site": "s", "time": _at(0)})
    with pytest.raises(queries.RecorderOverloadedError):
        bounded.add({"site": "s", "time": _at(1)})
    bounded.close()


def test_a_threaded_flush_failing_on_its_first_batch_keeps_the_others(embedded_db):
    """The disk full for a flush of three batches: the first is kept to send again, and
    the two after it wait for the next flush instead of being dropped (found by the
    simulator, tests/test_simulation.py seed 4)."""
    writer = EventWriter(embedded_db, flush_interval=3600, batch_size=2)
    real, calls = writer.collection, []

    class FullOnce:
        def insert_many(self, docs, ordered):
            calls.append(len(docs))
            if len(calls) == 1:
                raise AutoReconnect("the disk is full")
            return real.insert_many(docs, ordered=ordered)

    writer.collection = FullOnce()
    for minute in range(5):
        writer.add({"time": _at(minute), "site": "s", "path": "/", "status": 200})
    with pytest.raises(AutoReconnect):
        writer.flush()
    writer.flush()
    writer.close()
    assert len(stored_events(embedded_db)) == 5
