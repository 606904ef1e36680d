"""Events a retention deleted still count in their hour's rollups: a late event of that
hour adds to them instead of replacing them, exactly once whatever the timing of the
deletion (a run killed between its two writes, a run deleting while another reads)."""

from __future__ import annotations

import datetime as dt

from test_rollups import assert_matches, event, insert

from queries.events import buckets, expired
from queries.events import collection as events
from queries.events.writer import EventWriter
from queries.rollups.build import run_rollups

T0 = dt.datetime(2026, 1, 2, tzinfo=dt.UTC)
HOUR = dt.datetime(2026, 1, 1, 10, tzinfo=dt.UTC)
LATER = T0 + dt.timedelta(days=40)            # past a 30-day retention


def first(n: int = 120) -> list[dict]:
    return [event(HOUR + dt.timedelta(seconds=30 * i), path=f"/p{i % 3}",
                  status=(200, 404, None)[i % 3], size=i) for i in range(n)]


def late() -> list[dict]:
    return [event(HOUR + dt.timedelta(minutes=59), path="/p1", status=500, size=7),
            event(LATER - dt.timedelta(hours=1), path="/new")]


def expire_old(db) -> int:
    run_rollups(db, now=T0 + dt.timedelta(minutes=5))
    return run_rollups(db, now=LATER, retention=30).expired


def test_a_late_event_adds_to_the_hour_whose_events_expired(db):
    old = first()
    insert(db, old, at=T0)
    assert expire_old(db) == len(old)
    assert buckets.events_in(db, {}) == 0
    insert(db, late(), at=LATER + dt.timedelta(minutes=1))
    run_rollups(db, now=LATER + dt.timedelta(minutes=10), retention=30)
    assert_matches(db, old + late())


def test_a_run_killed_between_keeping_and_deleting_counts_each_event_once(db, monkeypatch):
    old = first()
    insert(db, old, at=T0)
    run_rollups(db, now=T0 + dt.timedelta(minutes=5))

    def kept_only(db, batch):                  # killed before deleting
        db[expired.COLLECTION].insert_many([{"_id": b["_id"], **expired._kept(b)}
                                            for b in batch])
        return 0

    monkeypatch.setattr(expired, "_expire", kept_only)
    run_rollups(db, now=LATER, retention=30)
    monkeypatch.undo()
    assert buckets.events_in(db, {}) == len(old)          # the buckets beside their totals
    insert(db, late(), at=LATER + dt.timedelta(minutes=1))
    run = run_rollups(db, now=LATER + dt.timedelta(minutes=10), retention=30)
    assert_matches(db, old + late())
    assert run.expired == len(old) and buckets.events_in(db, {"site": "s1"}) == 2


def test_buckets_expired_while_a_run_reads_count_once(db, monkeypatch):
    old = first()
    insert(db, old, at=T0)
    run_rollups(db, now=T0 + dt.timedelta(minutes=5))
    insert(db, late(), at=LATER + dt.timedelta(minutes=1))
    overlapping, reads = buckets.overlapping, []

    def racing(*args):
        yield from overlapping(*args)
        reads.append(1)
        if len(reads) == 1:        # another run deletes what this one has just counted
            events.expire(db, 30, rolled_up_until=LATER, now=LATER)

    monkeypatch.setattr(buckets, "overlapping", racing)
    run_rollups(db, now=LATER + dt.timedelta(minutes=10))
    assert buckets.events_in(db, {}) == 2 and len(reads) > 1       # read again
    assert_matches(db, old + late())


def test_a_pass_read_again_drops_the_totals_it_had_kept(db):
    writer = EventWriter(db, clock=lambda: T0, keyed=True)
    stream = events.stream_key("ingest-x:1")
    for i, e in enumerate(first(10)):
        writer.add(e, (stream, 100 * i))
    writer.flush()
    run_rollups(db, now=T0 + dt.timedelta(minutes=5))
    assert events.expire(db, 30, rolled_up_until=LATER, now=LATER) == 10
    assert db[expired.COLLECTION].count_documents({}) == 1
    events.forget(db, stream, 0)
    assert db[expired.COLLECTION].count_documents({}) == 0
