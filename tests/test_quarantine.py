"""No background writer dies of one bad item: a batch failing for its content is written
document by document and what still fails is set aside (queries/quarantine.py), a full
disk is waited out with nothing acknowledged lost, and a stopped thread comes back."""

from __future__ import annotations

import datetime as dt
import random
import time

import pytest
from reference import counters, expected_counters

import queries
from queries.counting import DimensionRecorder
from queries.dimensions import classify
from queries.events.writer import EventWriter
from queries.quarantine import COLLECTION, listed, transient
from queries.stats import schema
from queries.store.embedded.failures import OUT_OF_DISK_SPACE

NOW = dt.datetime(2026, 11, 25, 15, 40, tzinfo=dt.UTC)
BAD = "/\ud800"        # a lone surrogate: no database can store it as UTF-8


def wait_until(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_page_no_store_can_hold_is_set_aside_and_the_rest_counted(db):
    """Past validation (which refuses it: tests/test_beacon.py), a bad page still cannot
    stop the counting: its documents are set aside, the others written, the thread up."""
    recorder = queries.HitRecorder(db, flush_interval=0.05, preallocate_next_day=False)
    good = [(NOW, "s", f"/p{i}", 1) for i in range(20)]
    for ts, site, page, n in good[:10]:
        recorder.record(site, page, ts, n)
    recorder._names[("s", BAD)] = ("s", BAD)              # as if validation let it through
    recorder.record("s", BAD, NOW)
    for ts, site, page, n in good[10:]:
        recorder.record(site, page, ts, n)
    wait_until(lambda: recorder.status().pending_hits == 0)
    assert recorder._thread.is_alive() and recorder.problems() == []
    wanted = expected_counters(good)
    got = counters(db)
    assert {k: v for k, v in got[schema.DAILY].items() if "p" in k} == {
        k: v for k, v in wanted[schema.DAILY].items() if "p" in k}
    assert recorder.quarantine.count == 2           # the page's day and month
    assert db[COLLECTION].count_documents({}) == 2
    assert all(r"\ud800" in item["what"] for item in listed(db))
    for i in range(5):                                # and it goes on counting
        recorder.record("s", "/after", NOW + dt.timedelta(minutes=i))
    recorder.close()
    assert db[schema.DAILY].find_one({"_id": "20261125/s/after"})["daily"] == 5


def test_a_bad_dimension_value_and_sketch_are_set_aside(db):
    dims = DimensionRecorder(db, flush_interval=0.05)
    good = classify("s", "/", agent="Mozilla/5.0 Firefox/120.0", address="81.0.0.1")
    bad = good._replace(values=(*good.values, ("referrer", "x\ud800")))
    dims.record("s", "/", NOW, bad)
    dims.record("s", "/", NOW, good)
    wait_until(lambda: dims.status().pending_hits == 0)
    assert dims._thread.is_alive() and dims.quarantine.count >= 1
    dims.record("s", "/", NOW, good)
    dims.close()
    assert db["dims.hourly"].count_documents({}) + dims.quarantine.count >= 1


def test_a_full_disk_is_waited_out_and_nothing_acknowledged_is_lost(embedded_db):
    """SQLite's own limit (``max_page_count``) makes the disk full: the writes fail as a
    MongoDB server's do (OutOfDiskSpace), are retried with backoff, and all land once
    there is room again."""
    store = embedded_db.client.store
    full = store._writer.execute("PRAGMA page_count").fetchone()[0] + 1
    store._writer.execute(f"PRAGMA max_page_count={full}")
    recorder = queries.HitRecorder(embedded_db, flush_interval=0.05, max_backoff=0.2,
                                   preallocate_next_day=False)
    hits = [(NOW, "s", f"/p{i}", 1) for i in range(200)]
    for ts, site, page, n in hits:
        recorder.record(site, page, ts, n)
    wait_until(lambda: recorder.status().failures >= 2)
    assert "OutOfDiskSpace" in recorder.status().last_error or "full" in \
        recorder.status().last_error
    assert recorder._thread.is_alive() and recorder.status().pending_hits == 200
    store._writer.execute("PRAGMA max_page_count=1073741823")
    wait_until(lambda: recorder.status().pending_hits == 0)
    recorder.close()
    assert counters(embedded_db) == expected_counters(hits)
    assert recorder.quarantine.count == 0


def test_store_failures_are_transient_and_content_ones_are_not():
    from pymongo.errors import BulkWriteError, OperationFailure

    assert transient(OperationFailure("full", code=OUT_OF_DISK_SPACE))
    assert not transient(UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates"))
    too_big = BulkWriteError({"writeErrors": [{"index": 0, "code": 17419}],
                              "writeConcernErrors": []})
    assert not transient(too_big)
    assert transient(BulkWriteError({"writeErrors": [], "writeConcernErrors": [{"code": 64}]}))


def test_a_stopped_flush_thread_is_revived_and_said(db):
    recorder = queries.HitRecorder(db, flush_interval=0.05, preallocate_next_day=False)
    recorder._stop.set()
    recorder._thread.join(30)
    assert recorder.problems() == ["HitRecorder: its flush thread is down"]
    recorder._stop.clear()
    assert recorder.revive() and recorder.restarts == 1 and not recorder.revive()
    recorder.record("s", "/", NOW)
    wait_until(lambda: recorder.status().pending_hits == 0)
    recorder.close()


def test_an_event_no_store_can_hold_is_set_aside_and_the_others_written(db):
    writer = EventWriter(db, flush_interval=0.05)
    for path in ("/a", BAD, "/b"):
        writer.add({"time": NOW, "site": "s", "host": "1.2.3.4", "method": "GET",
                    "path": path, "query": "", "status": 200, "bytes": 1,
                    "referrer": None, "user_agent": None})
    wait_until(lambda: writer.pending() == 0 and writer.totals.written == 2)
    assert writer._thread.is_alive() and writer.quarantine.count == 1
    writer.close()


@pytest.mark.parametrize("n", [3])
def test_events_wait_out_a_full_disk(embedded_db, n):
    store = embedded_db.client.store
    full = store._writer.execute("PRAGMA page_count").fetchone()[0] + 1
    store._writer.execute(f"PRAGMA max_page_count={full}")
    writer = EventWriter(embedded_db, flush_interval=0.05)
    for i in range(n * 100):    # paths that do not compress: more than a page's worth
        writer.add({"time": NOW, "site": "s", "host": "1.2.3.4", "method": "GET",
                    "path": f"/p{i}/{random.Random(i).getrandbits(512):0128x}", "query": "",
                    "status": 200, "bytes": 1, "referrer": None, "user_agent": None})
    time.sleep(0.5)
    assert writer.totals.written == 0 and writer.pending() == n * 100
    store._writer.execute("PRAGMA max_page_count=1073741823")
    wait_until(lambda: writer.totals.written == n * 100)
    writer.close()
    assert writer.totals.failed == 0
