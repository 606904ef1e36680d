"""HitRecorder: equals log_hit, loses and duplicates nothing under threads and failures,
bounds its memory, reports what it does, pre-allocates tomorrow, flushes on exit."""

from __future__ import annotations

import datetime as dt
import threading
import time
from contextlib import contextmanager

import pytest
from dash.testing.wait import until
from fakes import (
    WrappedDB,
    fail_after,
    fail_before,
    fail_half,
    lose_insert_race,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pymongo.errors import PyMongoError
from reference import clear, counters, expected_counters, stored

import queries
from queries import validation
from queries.counting import guarded
from queries.errors import InvalidRangeError, RecorderOverloadedError
from queries.stats import schema
from queries.status import as_dict

UTC = dt.UTC
T0 = dt.datetime(2026, 11, 21, 22, 0, tzinfo=UTC)
PAGES = ("/index.html", "/a.b", "/$x", "y.$z")
IDLE = 3600  # a flush interval that never fires during a test: flushes are explicit


@pytest.fixture
def ref_db(db):
    """A sibling database on the same backend for log_hit's reference documents."""
    ref = db.client[db.name + "_ref"]
    yield ref
    for name in (schema.DAILY, schema.MONTHLY):
        ref[name].drop()


def _hits(count, seconds=7200, sites=("s1", "s2")):
    return [(T0 + dt.timedelta(seconds=(i * 7919) % seconds), sites[i % len(sites)],
             validation.page(PAGES[i % len(PAGES)]), 1 + i % 2) for i in range(count)]


def _record_all(recorder, hits):
    for ts, site, page, n in hits:
        recorder.record(site, page, ts, n=n)


hit_lists = st.lists(
    st.tuples(st.integers(0, 3 * 86400), st.sampled_from(("s1", "s-2")),
              st.sampled_from(PAGES), st.integers(1, 4)),
    min_size=1, max_size=30)


@pytest.mark.volume
@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=hit_lists, split=st.integers(0, 30))
def test_recorder_documents_equal_log_hit(db, ref_db, raw, split):
    clear(db)
    clear(ref_db)
    hits = [(T0 + dt.timedelta(seconds=s), site, page, n) for s, site, page, n in raw]
    with queries.HitRecorder(db, flush_interval=IDLE) as recorder:
        for i, (ts, site, page, n) in enumerate(hits):
            recorder.record(site, page, ts, n=n)
            if i == split:
                recorder.flush()  # increments spread over two flushes add up too
    for ts, site, page, n in hits:
        for _ in range(n):
            queries.log_hit(ref_db, ts, site, page)
    assert stored(db) == stored(ref_db)


@pytest.mark.volume
def test_eight_threads_recording_concurrently_lose_nothing(db):
    hits = _hits(8 * 800, seconds=3 * 86400)
    recorder = queries.HitRecorder(db, flush_interval=0.01, max_pending_docs=10)
    chunks = [hits[i::8] for i in range(8)]
    threads = [threading.Thread(target=_record_all, args=(recorder, chunk)) for chunk in chunks]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    recorder.close()
    stats = as_dict(recorder.status())
    assert stats["hits_accepted"] == stats["hits_written"] == sum(n for *_, n in hits)
    assert stats["flushes"] > 1
    assert counters(db) == expected_counters(hits)


@pytest.mark.parametrize("faults", [
    [fail_before], [fail_after], [fail_half], [None, fail_after], [fail_after, fail_half],
    [fail_half, fail_half, fail_before],
], ids=["before", "after-unknown-outcome", "partial", "second-collection-after",
        "after-then-partial", "repeated-partial"])
def test_failed_flush_then_recovery_loses_and_duplicates_nothing(db, faults):
    wrapped = WrappedDB(db, faults)
    first, second = _hits(40), _hits(25, seconds=86400 * 2)
    recorder = queries.HitRecorder(wrapped, flush_interval=IDLE)
    _record_all(recorder, first)
    for _ in range(sum(1 for f in faults if f)):
        with pytest.raises(PyMongoError):
            recorder.flush()
    assert recorder.status().pending_hits > 0
    _record_all(recorder, second)  # new hits wait behind the failed batch
    recorder.flush()
    recorder.close()
    stats = as_dict(recorder.status())
    assert stats["failures"] == sum(1 for f in faults if f)
    assert stats["pending_hits"] == 0
    assert stats["hits_written"] == stats["hits_accepted"]
    assert counters(db) == expected_counters(first + second)
    # Each document is applied once per batch, a partial write's part included.
    assert stats["documents_written"] == _documents(first) + _documents(second)


def _documents(hits) -> int:
    """The daily and monthly documents a batch of ``hits`` touches, ``*`` included."""
    return len({(coll, site, name, ts.date() if coll == "d" else (ts.year, ts.month))
                for ts, site, page, _ in hits for name in (page, "*") for coll in "dm"})


@pytest.mark.parametrize("fault", [fail_before, fail_after, fail_half],
                         ids=["before", "after-unknown-outcome", "partial"])
def test_a_flush_in_slices_keeps_only_what_its_failed_slice_left(db, monkeypatch, fault):
    """A batch is written a slice at a time (memory); the second slice failing leaves the
    first applied and out of the batch, and the retry counts every hit once."""
    monkeypatch.setattr(guarded, "WRITE_SLICE", 2)
    hits = _hits(40)
    recorder = queries.HitRecorder(WrappedDB(db, [None, fault]), flush_interval=IDLE)
    _record_all(recorder, hits)
    with pytest.raises(PyMongoError):
        recorder.flush()
    assert 0 < recorder.status().pending_documents < _documents(hits)
    recorder.flush()
    recorder.close()
    stats = as_dict(recorder.status())
    assert counters(db) == expected_counters(hits)
    assert stats["documents_written"] == _documents(hits)
    assert stats["round_trips"] > 2 * len({"d", "m"})


def test_background_thread_retries_with_backoff_until_written(db):
    wrapped = WrappedDB(db, [fail_after, fail_half, fail_before])
    hits = _hits(30)
    recorder = queries.HitRecorder(wrapped, flush_interval=0.01, max_backoff=0.05)
    _record_all(recorder, hits)
    deadline = time.monotonic() + 20
    while recorder.status().pending_hits and time.monotonic() < deadline:
        time.sleep(0.02)
    recorder.close()
    assert recorder.status().failures >= 3
    assert counters(db) == expected_counters(hits)


def test_upsert_lost_to_another_writer_is_sent_again(db):
    """The duplicate key of an insert race is not mistaken for "already applied"."""
    wrapped = WrappedDB(db, [lose_insert_race, None, lose_insert_race])
    ts = dt.datetime(2026, 11, 21, 10, 5, tzinfo=UTC)
    with queries.HitRecorder(wrapped, flush_interval=IDLE) as recorder:
        recorder.record("s1", "/a", ts, n=3)
        recorder.flush()
        assert recorder.status().failures == 0
    assert wrapped.bulk_calls == 4  # each collection: lost race, then sent again
    day = db[schema.DAILY].find_one({"_id": schema.daily_id(schema.day_start(ts), "s1", "/a")})
    month = db[schema.MONTHLY].find_one(
        {"_id": schema.monthly_id(schema.month_start(ts), "s1", "/a")})
    assert day["daily"] == 1003 and day["minute"]["10"]["5"] == 3
    assert month["monthly"] == 1003 and month["daily"]["21"] == 3


def test_backpressure_refuses_once_bounded_and_keeps_what_it_accepted(db):
    wrapped = WrappedDB(db, [fail_before] * 10_000)
    recorder = queries.HitRecorder(wrapped, flush_interval=IDLE, max_pending_docs=4)
    accepted, refused = [], 0
    for i in range(300):
        hit = (T0, "s1", f"/p{i}", 1)
        try:
            recorder.record("s1", hit[2], T0)
            accepted.append(hit)
        except RecorderOverloadedError as exc:
            assert "hit refused" in str(exc) and "AutoReconnect" in str(exc)
            refused += 1
        assert recorder.status().pending_documents <= 3 * 4 + 4
    stats = as_dict(recorder.status())
    assert refused > 250 and stats["refused"] == refused
    # During the backoff, record() does not call the failing database again.
    assert wrapped.bulk_calls == 1
    wrapped.faults.clear()
    recorder.flush()
    recorder.close()
    assert counters(db) == expected_counters(accepted)


def test_stats_report_what_happened(db):
    wrapped = WrappedDB(db, [fail_before])
    recorder = queries.HitRecorder(wrapped, flush_interval=IDLE)
    ts = dt.datetime(2026, 11, 21, 10, 5, tzinfo=UTC)
    recorder.record("s1", "/a", ts, n=3)
    recorder.record("s1", "/b", ts)
    assert recorder.status().pending_documents == 6  # a, b, * x daily, monthly
    with pytest.raises(PyMongoError):
        recorder.flush()
    failed = as_dict(recorder.status())
    assert failed["failures"] == 1 and failed["pending_hits"] == 4
    assert failed["last_error"].startswith("AutoReconnect")
    recorder.flush()  # the failure stopped at stats.daily: 3 + 6 update statements
    recorder.close()
    assert as_dict(recorder.status()) == {
        "hits_accepted": 4, "hits_written": 4, "documents_written": 6, "flushes": 1,
        "db_operations": 9, "round_trips": 3, "failures": 1, "refused": 0,
        "backpressure_flushes": 0, "pending_documents": 0, "pending_hits": 0,
        "last_flush_latency_s": recorder.status().last_flush_latency_s,
        "last_error": failed["last_error"],
    }
    assert recorder.status().last_flush_latency_s > 0


def test_bad_input_and_closed_recorder_are_refused(db):
    recorder = queries.HitRecorder(db, flush_interval=IDLE)
    for n in (0, -1, 1.5, True):
        with pytest.raises(InvalidRangeError):
            recorder.record("s1", "/a", T0, n=n)
    with pytest.raises(queries.NaiveTimestampError):
        recorder.record("s1", "/a", dt.datetime(2026, 1, 1))
    with pytest.raises(queries.InvalidSiteError):
        recorder.record("bad site", "/a", T0)
    recorder.close()
    with pytest.raises(RecorderOverloadedError, match="closed"):
        recorder.record("s1", "/a", T0)
    assert recorder.status().hits_accepted == 0


def test_next_utc_day_is_preallocated_during_the_last_hour(db):
    """For the pages that came back (hits in two flushes of the day), not for a page seen
    once: a flood of made-up names through /hit must not get a day of zeros each."""
    now = dt.datetime(2026, 11, 21, 23, 10, tzinfo=UTC)
    tomorrow = dt.datetime(2026, 11, 22, tzinfo=UTC)
    recorder = queries.HitRecorder(db, flush_interval=IDLE, clock=lambda: now)
    for page in ("/a.b", "/once"):
        recorder.record("s1", page)  # ts from the clock
    recorder.flush()
    assert recorder.preallocate_next_day(now) == 0          # nobody came back yet
    recorder.record("s1", "/a.b")
    recorder.flush()
    assert recorder.preallocate_next_day(now) == 1
    recorder.close()
    doc = db[schema.DAILY].find_one({"_id": schema.daily_id(tomorrow, "s1", "/a.b")})
    assert doc["daily"] == 0 and len(doc["minute"]) == 24
    assert db[schema.DAILY].find_one({"_id": schema.daily_id(tomorrow, "s1", "*")})
    assert db[schema.DAILY].find_one({"_id": schema.daily_id(tomorrow, "s1", "/once")}) is None
    today = db[schema.DAILY].find_one({"_id": schema.daily_id(schema.day_start(now), "s1", "/a.b")})
    assert today["daily"] == 2 and today["minute"]["23"]["10"] == 2
    assert recorder.preallocate_next_day(now) == 0  # once per page and day


def test_the_recorders_thread_preallocates_in_the_last_hour(db):
    now = dt.datetime(2026, 11, 21, 23, 10, tzinfo=UTC)
    target = schema.daily_id(dt.datetime(2026, 11, 22, tzinfo=UTC), "s1", "/a")
    recorder = queries.HitRecorder(db, flush_interval=0.01, clock=lambda: now)
    recorder.record("s1", "/a")
    until(lambda: recorder.status().hits_written == 1, timeout=30)
    recorder.record("s1", "/a")
    until(lambda: db[schema.DAILY].find_one({"_id": target}) is not None, timeout=30)
    recorder.close()


def test_no_preallocation_before_the_last_hour(db):
    now = dt.datetime(2026, 11, 21, 22, 59, tzinfo=UTC)
    recorder = queries.HitRecorder(db, flush_interval=IDLE, clock=lambda: now)
    recorder.record("s1", "/a")
    recorder.flush()
    recorder._tick()
    recorder.close()
    assert db[schema.DAILY].count_documents({"metadata.date": now + dt.timedelta(hours=2)}) == 0
    assert db[schema.DAILY].count_documents({}) == 2


# -- a stable writer id whose flushes span processes (hitboard ingest) -------------------
@pytest.mark.parametrize("fault", [fail_after, fail_half], ids=["unknown-outcome", "partial"])
def test_a_batch_resent_by_another_process_under_its_writer_and_number_counts_once(db, fault):
    """Process 1 dies while flush 7 is applied in part; process 2, same writer, sends the
    same increments under number 7 again, then flush 8: every hit counts once."""
    first, second = _hits(40), _hits(25, seconds=86400 * 2)
    dying = queries.HitRecorder(WrappedDB(db, [fault]), flush_interval=IDLE, writer="w-1")
    _record_all(dying, first)
    with pytest.raises(PyMongoError):
        dying.flush(seq=7)
    dying._failed = None      # what dies with the process: no retry from it
    dying.close()
    with queries.HitRecorder(db, flush_interval=IDLE, writer="w-1") as restarted:
        _record_all(restarted, first)
        restarted.flush(seq=7)
        _record_all(restarted, second)
        restarted.flush(seq=8)
    assert counters(db) == expected_counters(first + second)
    doc = db[schema.DAILY].find_one({}, {schema.FLUSHES: 1})
    assert set(doc[schema.FLUSHES]) == {"w-1"}


def test_a_writer_recorder_starts_no_batch_of_its_own_and_numbers_must_grow(db):
    recorder = queries.HitRecorder(db, flush_interval=0.01, writer="ingest-abc_1")
    recorder.record("s1", "/a", T0)
    time.sleep(0.1)                                  # its timer fired a few times
    assert recorder.flush() == 0                     # unnumbered: no new batch
    assert recorder.status().pending_hits == 1
    assert recorder.flush(seq=3) == 4
    recorder.record("s1", "/a", T0)
    with pytest.raises(InvalidRangeError, match="must exceed the last one used, 3"):
        recorder.flush(seq=3)
    recorder.close()                                 # leaves the unnumbered hit unwritten
    assert recorder.status().pending_hits == 1
    assert counters(db) == expected_counters([(T0, "s1", "/a", 1)])


def test_a_failed_numbered_batch_keeps_its_number(db):
    wrapped = WrappedDB(db, [fail_before])
    recorder = queries.HitRecorder(wrapped, flush_interval=IDLE, writer="w")
    recorder.record("s1", "/a", T0)
    with pytest.raises(PyMongoError):
        recorder.flush(seq=5)
    recorder.record("s1", "/b", T0)
    recorder.flush(seq=6)                            # 5 first, then 6
    recorder.close()
    assert db[schema.DAILY].find_one({"_id": schema.daily_id(
        schema.day_start(T0), "s1", "/a")})[schema.FLUSHES] == {"w": 5}
    assert db[schema.DAILY].find_one({"_id": schema.daily_id(
        schema.day_start(T0), "s1", "*")})[schema.FLUSHES] == {"w": 6}
    assert counters(db) == expected_counters([(T0, "s1", "/a", 1), (T0, "s1", "/b", 1)])


@pytest.mark.parametrize("writer", ["", "a.b", "$x", "a b", "x" * 65, "é", "0", "2026"])
def test_a_writer_id_must_be_a_safe_field_name(embedded_db, writer):
    with pytest.raises(queries.HitboardError, match="invalid writer id"):
        queries.HitRecorder(embedded_db, writer=writer)


def test_a_flush_computes_its_documents_before_it_enters_writing(db, monkeypatch):
    """``writing`` (the ingest's turn of the store's write lock) holds the writes alone:
    what is written is unchanged."""
    seen: list[str] = []

    @contextmanager
    def writing():
        seen.append("enter")
        yield
        seen.append("exit")

    recorder = queries.HitRecorder(db, flush_interval=IDLE)
    compute, write = recorder._documents, recorder._write
    monkeypatch.setattr(recorder, "_documents",
                        lambda *pending: (seen.append("documents"), compute(*pending))[1])
    monkeypatch.setattr(recorder, "_write", lambda batch: (seen.append("write"), write(batch))[1])
    hits = _hits(30)
    _record_all(recorder, hits)
    recorder.flush(writing=writing)
    assert seen == ["documents", "enter", "write", "exit"]
    assert counters(db) == expected_counters(hits)
    recorder.close()


def test_a_batch_its_transaction_rolled_back_whole_is_retried_whole(embedded_db):
    """Written in one transaction (``atomic``, as ingest writes), a batch whose second
    write fails is rolled back whole, the first write with it: the retry writes both
    (found by the simulator, tests/test_simulation.py seed 33)."""
    from queries.store.connection import atomic

    wrapped = WrappedDB(embedded_db, [None, fail_before])   # daily applied, monthly lost
    recorder = queries.HitRecorder(wrapped, flush_interval=IDLE, writer="w")
    recorder.record("s1", "/a", T0)
    with pytest.raises(PyMongoError):
        recorder.flush(seq=1, writing=lambda: atomic(embedded_db))
    recorder.flush(seq=1, writing=lambda: atomic(embedded_db))
    recorder.close()
    assert counters(embedded_db) == expected_counters([(T0, "s1", "/a", 1)])


def test_the_last_number_again_once_written_writes_nothing(db):
    """An owner flushing several recorders under one number retries all of them when
    one failed: those already written take the number again without error (seed 28)."""
    recorder = queries.HitRecorder(db, flush_interval=IDLE, writer="w")
    recorder.record("s1", "/a", T0)
    assert recorder.flush(seq=2) == 4
    assert recorder.flush(seq=2) == 0
    recorder.close()
    assert counters(db) == expected_counters([(T0, "s1", "/a", 1)])
