"""queries.stats.catalog: top pages equal a brute-force count to the minute; the known
sites and pages."""

from __future__ import annotations

import datetime as dt

import pytest
from fakes import WrappedDB, indexes_used
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import clear, expected_top

import queries
from queries import validation

UTC = dt.UTC
ANCHOR = dt.datetime(2026, 10, 24, tzinfo=UTC)  # Paris falls back on the 25th
PAGES = ("/index.html", "/a.b", "/$price", "/x.$y/z", "/e", "/f")


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.lists(st.tuples(st.integers(0, 3 * 86400), st.sampled_from(("s1", "s2")),
                              st.sampled_from(PAGES), st.integers(1, 3)), max_size=40),
       start_s=st.integers(-3600, 3 * 86400), length_s=st.integers(1, 3 * 86400),
       n=st.integers(1, 8))
def test_top_pages_equal_a_brute_force_count(db, raw, start_s, length_s, n):
    clear(db)
    hits = [(ANCHOR + dt.timedelta(seconds=s), site, page, k) for s, site, page, k in raw]
    with queries.HitRecorder(db, flush_interval=3600) as recorder:
        for ts, site, page, k in hits:
            recorder.record(site, page, ts, n=k)
    start = ANCHOR + dt.timedelta(seconds=start_s)
    end = start + dt.timedelta(seconds=length_s)
    frame = queries.top_pages(db, "s1", start, end, n=n)
    truth = expected_top(hits, "s1", start, end)
    assert frame.index.name == "page" and list(frame.columns) == ["hits"]
    got = dict(frame["hits"].items())
    assert len(got) == min(n, len(truth))
    assert all(truth[page] == hits_ for page, hits_ in got.items())
    assert list(frame["hits"]) == sorted(frame["hits"], reverse=True)
    left_out = [v for page, v in truth.items() if page not in got]
    assert not left_out or max(left_out) <= min(got.values())


def test_list_sites_and_pages(db):
    ts = dt.datetime(2026, 11, 21, tzinfo=UTC)
    for site, page in (("b", "/x"), ("a", "/y.z"), ("a", "/$w"), ("a", "/y.z")):
        queries.log_hit(db, ts, site, page)
    assert queries.list_sites(db) == ["a", "b"]
    assert queries.list_pages(db, "a") == ["/$w", "/y.z"]
    assert queries.list_pages(db, "nobody") == []
    with pytest.raises(queries.InvalidSiteError):
        queries.list_pages(db, "no/site")


def test_first_pages_are_the_listing_s_first(db):
    # Each page in three months (a document a month, in a row in name order), read in
    # chunks of 2n documents: a chunk may end inside a page's months.
    pages = [f"/p{i}" for i in range(7)] + ["/$w", "/Z"]
    for month in (1, 2, 3):
        for page in pages:
            queries.log_hit(db, dt.datetime(2026, month, 5, tzinfo=UTC), "a",
                            validation.page(page))
    queries.log_hit(db, ANCHOR, "b", "/other-site")
    listed = queries.list_pages(db, "a")
    for n in range(1, len(pages) + 2):
        assert queries.first_pages(db, "a", n) == listed[:n]
    assert queries.first_pages(db, "nobody", 5) == []
    with pytest.raises(queries.InvalidSiteError):
        queries.first_pages(db, "no/site", 5)


def test_top_pages_of_an_empty_range_is_empty(db):
    frame = queries.top_pages(db, "s1", ANCHOR, ANCHOR + dt.timedelta(hours=1))
    assert frame.empty and frame.index.name == "page"
    with pytest.raises(queries.InvalidRangeError):
        queries.top_pages(db, "s1", ANCHOR, ANCHOR)


def test_top_pages_uses_the_site_page_date_index(db):
    for page in ("/a", "/b"):
        queries.log_hit(db, ANCHOR, "s1", validation.page(page))
    wrapped = WrappedDB(db)
    queries.top_pages(wrapped, "s1", ANCHOR + dt.timedelta(minutes=7),
                      ANCHOR + dt.timedelta(days=2, minutes=3))
    assert wrapped.finds
    for collection, (query, *_), _ in wrapped.finds:
        assert indexes_used(db, collection, query) == {"site_page_date"}


def test_last_hit_is_the_minute_of_the_newest_hit(db):
    from queries.stats.catalog import last_hit

    assert last_hit(db, "s1") is None
    for ts, site in ((ANCHOR + dt.timedelta(days=1, hours=23, minutes=59, seconds=30), "s1"),
                     (ANCHOR + dt.timedelta(days=1, hours=7, minutes=5), "s1"),
                     (ANCHOR + dt.timedelta(hours=22, minutes=40), "s1"),
                     (ANCHOR + dt.timedelta(days=3, hours=1), "s2")):
        queries.log_hit(db, ts, site, "/a")
    # The next days' documents, allocated with zeros, hold no hit.
    queries.preallocate(db, ANCHOR + dt.timedelta(days=2), "s1", "/a")
    assert last_hit(db, "s1") == ANCHOR + dt.timedelta(days=1, hours=23, minutes=59)
    assert last_hit(db, "s2") == ANCHOR + dt.timedelta(days=3, hours=1)
    with pytest.raises(queries.InvalidSiteError):
        last_hit(db, "no/site")


def test_last_hit_reads_one_document_by_the_site_page_date_index(db):
    from queries.stats.catalog import last_hit

    for days in range(5):
        queries.log_hit(db, ANCHOR + dt.timedelta(days=days, hours=3), "s1", "/a")
    wrapped = WrappedDB(db)
    assert last_hit(wrapped, "s1") == ANCHOR + dt.timedelta(days=4, hours=3)
    assert len(wrapped.finds) == 1
    for collection, (query, *_), _ in wrapped.finds:
        assert indexes_used(db, collection, query) == {"site_page_date"}


def test_site_span_is_the_minutes_of_the_first_and_last_hits(db):
    """Minutes, not UTC days: a zone's days holding hits are those of these instants."""
    assert queries.site_span(db, "s1") is None
    for ts in (ANCHOR + dt.timedelta(days=1, hours=2, minutes=7, seconds=40),
               ANCHOR + dt.timedelta(days=1, hours=9),
               ANCHOR + dt.timedelta(days=3, hours=15, minutes=35, seconds=5)):
        queries.log_hit(db, ts, "s1", "/a")
    queries.preallocate(db, ANCHOR, "s1", "/a")           # a day of zeros before
    assert queries.site_span(db, "s1") == (ANCHOR + dt.timedelta(days=1, hours=2, minutes=7),
                                           ANCHOR + dt.timedelta(days=3, hours=15, minutes=35))
