"""The recent-hits feed over event buckets, against a brute-force answer."""

from __future__ import annotations

import datetime as dt

import pytest
from fakes import stored_events
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from queries.events import recent
from queries.events.writer import EventWriter
from queries.stats import schema

BASE = dt.datetime(2026, 11, 21, 12, tzinfo=dt.UTC)
PAGES = ["/a", "/b", "/c", "/d"]
SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def _load(db, writes: list[list[tuple[str, str, int]]]) -> None:
    """Each inner list is one write (buckets of its own) of (site, page, ms) events."""
    db[schema.EVENTS].delete_many({})
    writer = EventWriter(db, clock=lambda: BASE)
    for events in writes:
        for site, path, ms in events:
            writer.add({"time": BASE + dt.timedelta(milliseconds=ms), "site": site,
                        "host": "h", "method": "GET", "path": path, "query": "",
                        "status": 200, "bytes": 10, "referrer": "", "user_agent": "ua"})
        writer.flush()


def _brute(db, site, pages, n) -> list[dt.datetime]:
    events = stored_events(db, site)
    if pages and "*" not in pages:
        events = [e for e in events if e["path"] in pages]
    return sorted((e["time"] for e in events), reverse=True)[:n]


events_strategy = st.lists(st.lists(
    st.tuples(st.sampled_from(["s1", "s2"]), st.sampled_from(PAGES),
              st.integers(0, 400_000)), max_size=30), max_size=6)
pages_strategy = st.lists(st.sampled_from([*PAGES, "*"]), max_size=3)


@SETTINGS
@given(writes=events_strategy, pages=pages_strategy, n=st.integers(1, 30))
def test_the_feed_is_the_brute_force_answer(db, writes, pages, n):
    _load(db, writes)
    hits = recent.recent_hits(db, "s1", pages, n)
    assert [h["time"] for h in hits] == _brute(db, "s1", pages, n)
    chosen = set(pages) if pages and "*" not in pages else set(PAGES)
    assert all(h["site"] == "s1" and h["path"] in chosen for h in hits)
    assert len({h["_id"] for h in hits}) == len(hits)


@SETTINGS
@given(writes=st.lists(st.integers(1, 20), min_size=1, max_size=5), n=st.integers(1, 10))
def test_events_of_one_millisecond_come_last_written_first(db, writes, n):
    _load(db, [[("s1", "/a", 7)] * size for size in writes])
    hits = recent.recent_hits(db, "s1", ["/a"], n)
    order = [h["_id"] for h in stored_events(db, "s1")]
    assert [h["_id"] for h in hits] == order[::-1][:n]


def test_the_feed_is_newest_first_and_bounded(db):
    _load(db, [[("s1", "/a", ms) for ms in range(0, 5000, 10)]])
    hits = recent.recent_hits(db, "s1", ["a"], 5)
    assert [h["time"] for h in hits] == [
        BASE + dt.timedelta(milliseconds=ms) for ms in (4990, 4980, 4970, 4960, 4950)]
    assert hits[0]["user_agent"] == "ua" and "country" not in hits[0]
    with pytest.raises(recent.InvalidCountError, match="at most 1000"):
        recent.recent_hits(db, "s1", ["/a"], 1001)
    with pytest.raises(recent.InvalidCountError):
        recent.recent_hits(db, "s1", ["/a"], 0)


def test_a_rare_page_is_looked_for_among_the_newest_max_scanned_events(db, monkeypatch):
    _load(db, [[("s1", "/rare", 0)], [("s1", "/a", ms) for ms in range(1, 3001)]])
    monkeypatch.setattr(recent, "MAX_SCANNED", 2000)
    assert recent.recent_hits(db, "s1", ["/rare"], 5) == []
    monkeypatch.setattr(recent, "MAX_SCANNED", 5000)
    assert [h["path"] for h in recent.recent_hits(db, "s1", ["/rare"], 5)] == ["/rare"]


def test_invalid_site_is_refused(db):
    with pytest.raises(ValueError, match="invalid site"):
        recent.recent_hits(db, "bad site", [], 5)
