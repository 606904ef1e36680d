"""The recent-hits strategies against a brute-force answer, and the window's bounds."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from queries.events import recent
from queries.events.collection import INDEXES as EVENT_INDEXES
from queries.stats import schema

BASE = dt.datetime(2026, 11, 21, 12, tzinfo=dt.UTC)
PAGES = ["/a", "/b", "/c", "/d"]
SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def _event(site: str, path: str, ms: int) -> dict:
    return {"time": BASE + dt.timedelta(milliseconds=ms), "site": site, "host": "h",
            "method": "GET", "path": path, "query": "", "status": 200, "bytes": 10,
            "referrer": "", "user_agent": "ua", "ingested": BASE}


def _load(db, events: list[tuple[str, str, int]]) -> None:
    db[schema.EVENTS].delete_many({})
    if events:
        db[schema.EVENTS].insert_many([_event(*e) for e in events])


def _brute(db, site, pages, n):
    docs = list(db[schema.EVENTS].find({"site": site}))
    if pages and "*" not in pages:
        docs = [d for d in docs if d["path"] in pages]
    docs.sort(key=lambda d: (d["time"], d["_id"]), reverse=True)
    return [d["_id"] for d in docs[:n]]


events_strategy = st.lists(
    st.tuples(st.sampled_from(["s1", "s2"]), st.sampled_from(PAGES),
              st.integers(0, 400_000)),
    max_size=60,
)
pages_strategy = st.lists(st.sampled_from([*PAGES, "*"]), max_size=3)


@SETTINGS
@given(events=events_strategy, pages=pages_strategy, n=st.integers(1, 30))
def test_every_strategy_returns_the_brute_force_answer(db, events, pages, n):
    _load(db, events)
    expected = _brute(db, "s1", pages, n)
    for strategy in (
        lambda: recent.recent_sort_limit(db, "s1", pages, n, merge="in"),
        lambda: recent.recent_sort_limit(db, "s1", pages, n, merge="branches"),
        lambda: recent.recent_window(db, "s1", pages, n),
        lambda: recent.recent_window(db, "s1", pages, n, slack=0),
    ):
        assert [d["_id"] for d in strategy()] == expected


@SETTINGS
@given(events=events_strategy, n=st.integers(1, 10))
def test_ties_at_the_cut_are_decided_by_id(db, events, n):
    # Every event in one millisecond: only the _id order can pick the n.
    _load(db, [(site, page, 7) for site, page, _ in events])
    expected = _brute(db, "s1", PAGES[:2], n)
    assert [d["_id"] for d in recent.recent_sort_limit(db, "s1", PAGES[:2], n)] == expected
    got = recent.recent_sort_limit(db, "s1", PAGES[:2], n, merge="branches")
    assert [d["_id"] for d in got] == expected


@SETTINGS
@given(offsets=st.lists(st.integers(0, 10_000_000), unique=True, max_size=80),
       low=st.integers(1, 40), extra=st.integers(0, 10))
def test_window_count_lies_between_min_and_max(db, offsets, low, extra):
    _load(db, [("s1", PAGES[i % 3], ms) for i, ms in enumerate(offsets)])
    window = recent.find_window(db, "s1", PAGES[:3], low, low + extra)
    if len(offsets) < low:
        assert (window.start, window.count) == (None, len(offsets))
        return
    assert low <= window.count <= low + extra
    inside = [ms for ms in offsets if window.start is None
              or BASE + dt.timedelta(milliseconds=ms) >= window.start]
    assert len(inside) == window.count


def test_window_doubles_then_narrows(db):
    # One event a second: the 100 newest lie within 100 s, past the first 60 s span.
    _load(db, [("s1", "/a", s * 1000) for s in range(400)])
    window = recent.find_window(db, "s1", ["/a"], 100, 105)
    assert 100 <= window.count <= 105
    assert window.probes > 2
    assert BASE + dt.timedelta(seconds=400 - 106) <= window.start


def test_recent_hits_is_newest_first_and_bounded(db):
    _load(db, [("s1", "/a", ms) for ms in range(0, 5000, 10)])
    hits = recent.recent_hits(db, "s1", ["a"], 5)
    assert [h["time"] for h in hits] == [
        BASE + dt.timedelta(milliseconds=ms) for ms in (4990, 4980, 4970, 4960, 4950)]
    with pytest.raises(recent.InvalidCountError, match="at most 1000"):
        recent.recent_hits(db, "s1", ["/a"], 1001)
    with pytest.raises(recent.InvalidCountError):
        recent.recent_hits(db, "s1", ["/a"], 0)


def test_trace_counts_queries_and_documents(db):
    _load(db, [("s1", page, ms) for ms in range(200) for page in PAGES[:2]])
    trace = recent.Trace()
    recent.recent_sort_limit(db, "s1", PAGES[:2], 10, merge="branches", trace=trace)
    assert [q["kind"] for q in trace.queries] == ["find", "find"]
    assert trace.returned == 22


def test_ensure_recent_index_keeps_an_existing_index_under_another_name(db):
    for name in set(db[schema.EVENTS].index_information()) & set(recent.FEED_INDEXES):
        db[schema.EVENTS].drop_index(name)
    db[schema.EVENTS].create_index(recent.RECENT_INDEX, name="events_by_page")
    recent.ensure_recent_index(db)
    recent.ensure_recent_index(db)
    keys = [tuple(tuple(p) for p in info["key"])
            for info in db[schema.EVENTS].index_information().values()]
    assert keys.count(tuple(recent.RECENT_INDEX)) == 1
    assert tuple(EVENT_INDEXES["site_time"]) in keys


def test_invalid_site_is_refused(db):
    with pytest.raises(ValueError, match="invalid site"):
        recent.recent_hits(db, "bad site", [], 5)
