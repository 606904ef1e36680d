"""The events collection: indexes and retention, bulk writes that report failures."""

from __future__ import annotations

import datetime as dt

import pytest
from pymongo.errors import AutoReconnect

import queries
from queries.events import collection as events
from queries.events.collection import EventWriter
from queries.ingest.logformat import parse_line
from queries.rollups.build import run_rollups
from queries.stats import schema


def test_indexes_serve_the_feed_the_rollups_and_expiry(db):
    info = db[schema.EVENTS].index_information()
    keys = {name: [tuple(k) for k in spec["key"]] for name, spec in info.items()}
    assert keys["site_path_time"] == [("site", 1), ("path", 1), ("time", -1)]
    assert keys["site_time"] == [("site", 1), ("time", -1), ("path", 1), ("status", 1),
                                 ("bytes", 1)]
    assert keys[events.INGESTED_INDEX] == [("ingested", 1)]
    assert not any("expireAfterSeconds" in spec for spec in info.values())


def test_an_older_stores_ttl_index_is_replaced(db):
    db[schema.EVENTS].drop_index(events.INGESTED_INDEX)
    db[schema.EVENTS].create_index([("ingested", 1)], name=events.OLD_TTL_INDEX,
                                   expireAfterSeconds=86_400)
    queries.ensure_indexes(db)
    info = db[schema.EVENTS].index_information()
    assert events.OLD_TTL_INDEX not in info and events.INGESTED_INDEX in info


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
    assert db[schema.EVENTS].count_documents({}) == 1
    with pytest.raises(queries.HitboardError, match="retention"):
        events.expire(db, 0, rolled_up_until=now, now=now)


def test_a_rollup_run_expires_what_it_has_read(embedded_db):
    now = dt.datetime.now(dt.UTC)
    _two_events(embedded_db, now)
    run = run_rollups(embedded_db, now=now + dt.timedelta(minutes=5), retention=30)
    assert run.expired == 1
    assert embedded_db[schema.EVENTS].count_documents({}) == 1


def test_event_document_from_a_log_record():
    record = parse_line('::1 - - [17/May/2015:10:05:03 +0200] "GET /a?b=1 HTTP/1.1" - - "-" "ua"')
    doc = events.event_document(record, "demo")
    assert doc == {"time": dt.datetime(2015, 5, 17, 8, 5, 3, tzinfo=dt.UTC), "site": "demo",
                   "host": "::1", "method": "GET", "path": "/a", "query": "b=1",
                   "status": None, "bytes": 0, "referrer": None, "user_agent": "ua"}


def test_partial_bulk_failure_is_counted_never_silent(db):
    writer = EventWriter(db, batch_size=3)
    for i in range(5):
        writer.add({"_id": f"e{i % 4}", "site": "s", "path": "/"})   # e0 twice
    assert writer.flush() == 1
    assert (writer.totals.written, writer.totals.failed) == (4, 1)
    assert "1 of" in writer.totals.errors[0]
    assert db[schema.EVENTS].count_documents({}) == 4


def test_keyed_events_written_again_are_present_not_failed(db):
    at = dt.datetime(2015, 5, 17, 8, 5, 3, tzinfo=dt.UTC)
    stream = events.stream_key("w:1")
    ids = [events.event_id(stream, offset, at) for offset in (0, 90, 180)]
    assert ids[0] == events.event_id(stream, 0, at) and len(set(ids)) == 3
    assert events.event_id(events.stream_key("w:2"), 0, at) != ids[0]
    assert ids[0].generation_time == at.replace(microsecond=0)
    first = EventWriter(db, keyed=True)
    for oid in ids[:2]:
        first.add({"_id": oid, "site": "s", "path": "/"})
    assert first.flush() == 0 and first.totals.written == 2
    again = EventWriter(db, keyed=True, batch_size=2)   # a replayed batch and one more
    for oid in ids:
        again.add({"_id": oid, "site": "s", "path": "/"})
    again.add({"_id": ids[2], "site": "s", "path": 7})  # a real duplicate in the batch
    assert again.flush() == 0
    assert (again.totals.written, again.totals.present, again.totals.failed) == (1, 3, 0)
    assert db[schema.EVENTS].count_documents({}) == 3


def test_a_lost_connection_counts_the_whole_batch_failed(embedded_db, monkeypatch):
    writer = EventWriter(embedded_db)
    monkeypatch.setattr(writer.collection, "insert_many",
                        lambda *a, **k: (_ for _ in ()).throw(AutoReconnect("gone")))
    writer.add({"site": "s"})
    writer.add({"site": "s"})
    assert writer.flush() == 2 and writer.totals.failed == 2
    assert "AutoReconnect" in writer.totals.errors[0]


def test_write_concern_and_background_flush(embedded_db):
    with pytest.raises(queries.HitboardError, match="write concern"):
        EventWriter(embedded_db, concern="2")
    writer = EventWriter(embedded_db, concern="majority", flush_interval=0.05)
    writer.add({"site": "s", "path": "/"})
    for _ in range(200):
        if embedded_db[schema.EVENTS].count_documents({}):
            break
        writer._stop.wait(0.01)
    writer.close()
    assert embedded_db[schema.EVENTS].count_documents({}) == 1
    bounded = EventWriter(embedded_db, max_pending=1)
    bounded.add({"site": "s"})
    with pytest.raises(queries.RecorderOverloadedError):
        bounded.add({"site": "s"})
