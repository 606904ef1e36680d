"""The questions asked of raw events (``queries.events.reads``), on every backend: the
answers the rollups, breakdowns and live panels rely on, whatever the events' storage."""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

import queries
from queries.events import reads
from queries.events.writer import EventWriter

T0 = dt.datetime(2015, 5, 17, 10, tzinfo=dt.UTC)
INGESTED = dt.datetime(2026, 11, 22, 12, tzinfo=dt.UTC)


def _write(db, events, ingested=INGESTED):
    writer = EventWriter(db, clock=lambda: ingested)
    for event in events:
        writer.add(dict(event))
    writer.flush()
    assert writer.totals.failed == 0


def _event(minutes, path="/a", status=200, size=10, site="s", host="1.1.1.1",
           agent="Mozilla/5.0", referrer="-", query="", country=None):
    event = {"time": T0 + dt.timedelta(minutes=minutes), "site": site, "host": host,
             "method": "GET", "path": path, "query": query, "status": status,
             "bytes": size, "referrer": referrer, "user_agent": agent}
    if country:
        event["country"] = country
    return event


def test_touched_hours_are_the_hours_of_events_ingested_since(db):
    _write(db, [_event(0), _event(59), _event(61, site="t")], ingested=INGESTED)
    _write(db, [_event(180)], ingested=INGESTED + dt.timedelta(hours=1))
    assert reads.touched_hours(db, INGESTED) == {
        "s": {T0, T0 + dt.timedelta(hours=3)}, "t": {T0 + dt.timedelta(hours=1)}}
    assert reads.touched_hours(db, INGESTED + dt.timedelta(minutes=1)) == {
        "s": {T0 + dt.timedelta(hours=3)}}
    assert reads.waiting(db, INGESTED + dt.timedelta(minutes=1)) == 1
    assert reads.waiting(db, None) == 4


def test_hourly_totals_count_hits_and_bytes_of_just_the_asked_hours(db):
    _write(db, [_event(0, size=5), _event(1, size=7), _event(2, status=404, size=1),
                _event(30, path="/b"), _event(60), _event(125), _event(0, site="t")])
    hours = {T0, T0 + dt.timedelta(hours=2)}
    got = sorted(reads.hourly_totals(db, "s", hours))
    assert got == [(T0, "/a", 200, 2, 12), (T0, "/a", 404, 1, 1), (T0, "/b", 200, 1, 10),
                   (T0 + dt.timedelta(hours=2), "/a", 200, 1, 10)]


@settings(max_examples=40, deadline=None)
@given(events=st.lists(st.tuples(st.integers(0, 5 * 60 - 1), st.sampled_from(["/a", "/b", "/c"]),
                                 st.sampled_from([200, 404, 500, None]),
                                 st.one_of(st.none(), st.integers(0, 10**9))),
                       max_size=60),
       hours=st.sets(st.integers(0, 4), max_size=5))
def test_hourly_totals_equal_a_count_event_by_event(tmp_path_factory, events, hours):
    """Statuses and sizes of beacon events (None) too: a missing size counts 0 bytes."""
    db = queries.connect(str(tmp_path_factory.mktemp("store")))
    queries.ensure_indexes(db)
    _write(db, [_event(m, path=p, status=status, size=size) for m, p, status, size in events])
    asked = {T0 + dt.timedelta(hours=h) for h in hours}
    expected: dict = {}
    for m, p, status, size in events:
        hour = T0 + dt.timedelta(hours=m // 60)
        if hour in asked:
            hits, total = expected.get((hour, p, status), (0, 0))
            expected[(hour, p, status)] = (hits + 1, total + (size or 0))
    try:
        got = {(hour, p, status): (hits, size)
               for hour, p, status, hits, size in reads.hourly_totals(db, "s", asked)}
    finally:
        db.client.close()
    assert got == expected


def test_grouped_counts_each_distinct_key_once_within_the_range(db):
    _write(db, [_event(0, host="a"), _event(1, host="a"), _event(2, host="b", path="/b"),
                _event(3, host="b", country="FR"), _event(90, host="c")])
    start, end = T0, T0 + dt.timedelta(hours=1)
    got = {tuple(sorted(key.items())): n for key, n in reads.grouped(db, "s", start, end,
                                                                     ("h", "p"))}
    assert got == {(("h", "a"), ("p", "/a")): 2, (("h", "b"), ("p", "/b")): 1,
                   (("h", "b"), ("p", "/a")): 1}
    one_page = {key["h"]: n for key, n in reads.grouped(db, "s", start, end, ("h",), "/a")}
    assert one_page == {"a": 2, "b": 1}
    countries = {key.get("c"): n for key, n in reads.grouped(db, "s", start, end, ("c",))}
    assert countries == {None: 3, "FR": 1}
    assert reads.count(db, "s", start, end) == 4
    assert reads.count(db, "s", start, end, limit=10) == 4
    assert reads.count(db, "s", end, end + dt.timedelta(hours=1)) == 1


def test_a_count_past_its_limit_stops_reading(db):
    for week in range(3):                 # three writes: three buckets
        _write(db, [_event(week * 10 + m) for m in range(5)])
    end = T0 + dt.timedelta(hours=1)
    assert reads.count(db, "s", T0, end) == 15
    assert 5 < reads.count(db, "s", T0, end, limit=5) < 15
    assert reads.count(db, "s", T0 + dt.timedelta(minutes=2), end, limit=100) == 13


def test_newest_clients_come_newest_first_and_stop_at_the_limit(db):
    _write(db, [_event(m, host=f"10.0.0.{m}") for m in range(10)])
    end = T0 + dt.timedelta(minutes=9)
    clients = list(reads.newest_clients(db, "s", T0 + dt.timedelta(minutes=2), end, 3))
    assert clients == [(f"10.0.0.{m}", "Mozilla/5.0") for m in (9, 8, 7)]
    assert len(list(reads.newest_clients(db, "s", T0 + dt.timedelta(minutes=2), end,
                                         100))) == 8


@settings(max_examples=30, deadline=None)
@given(order=st.permutations(range(40)), cuts=st.lists(st.integers(1, 39), max_size=6),
       limit=st.integers(1, 45), first=st.integers(0, 39))
def test_newest_clients_are_the_newest_of_every_bucket(tmp_path_factory, order, cuts,
                                                       limit, first):
    """Buckets of events in any order (overlapping in time), the rows sorted and cut now
    and then: always the ``limit`` newest of the window, newest first."""
    db = queries.connect(str(tmp_path_factory.mktemp("store")))
    queries.ensure_indexes(db)
    bounds = [0, *sorted(set(cuts)), len(order)]
    for lo, hi in zip(bounds, bounds[1:], strict=False):      # one write, one bucket
        _write(db, [_event(m, host=f"10.0.0.{m}") for m in order[lo:hi]])
    start, end = T0 + dt.timedelta(minutes=first), T0 + dt.timedelta(minutes=39)
    expected = [(f"10.0.0.{m}", "Mozilla/5.0") for m in range(39, first - 1, -1)][:limit]
    assert list(reads.newest_clients(db, "s", start, end, limit)) == expected


def test_runs_join_consecutive_hours():
    hours = [T0, T0 + dt.timedelta(hours=1), T0 + dt.timedelta(hours=3)]
    assert reads.runs(hours) == [(T0, T0 + dt.timedelta(hours=2)),
                                 (T0 + dt.timedelta(hours=3), T0 + dt.timedelta(hours=4))]
