"""queries.series: every read equals a brute-force count, in several zones and across
DST changes, and is served by the site_page_date index."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pandas as pd
import pytest
from fakes import WrappedDB, indexes_used
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import clear, expected_series

import queries
from queries import validation
from queries.stats import schema

UTC = dt.UTC
SITES = ("site-1", "s.2")
PAGES = ("/index.html", "/a.b", "/$price", "/x.$y/z", "plain")
# Days around which hits fall: Paris springs forward (2026-03-29) and falls back
# (2026-10-25); a month boundary (daily series read two monthly documents).
ANCHORS = (dt.datetime(2026, 3, 28, tzinfo=UTC), dt.datetime(2026, 10, 24, tzinfo=UTC),
           dt.datetime(2026, 1, 30, tzinfo=UTC))
ZONES = ("UTC", "Europe/Paris", "Asia/Kolkata")
SPAN_S = 3 * 86400


@st.composite
def scenarios(draw):
    anchor = draw(st.sampled_from(ANCHORS))
    hits = draw(st.lists(
        st.tuples(st.integers(0, SPAN_S - 1), st.sampled_from(SITES), st.sampled_from(PAGES),
                  st.integers(1, 3)),
        max_size=40))
    start_s = draw(st.integers(-86400, SPAN_S))
    length_s = draw(st.integers(60, SPAN_S))
    pages = draw(st.lists(st.sampled_from(PAGES), min_size=1, max_size=3, unique=True))
    return (anchor, [(anchor + dt.timedelta(seconds=s), site, page, n)
                     for s, site, page, n in hits],
            anchor + dt.timedelta(seconds=start_s),
            anchor + dt.timedelta(seconds=start_s + length_s), pages)


def _check(frame: pd.DataFrame, zone, buckets, counts, columns):
    assert frame.index.name == "time"
    assert str(frame.index.tz) == str(zone)
    assert list(frame.columns) == columns
    assert [t.to_pydatetime().astimezone(UTC) for t in frame.index] == buckets
    assert all(dtype == "int64" for dtype in frame.dtypes)
    got = {(t.to_pydatetime().astimezone(UTC), page): int(v)
           for t, row in frame.iterrows() for page, v in row.items() if v}
    assert got == dict(counts)


# Europe/Paris (both DST changes) draws the full 12 examples; UTC and Asia/Kolkata,
# whose reads the same code serves, half as many (each example is seeded and read on
# every backend, the wire emulator's taking seconds).
EXAMPLES = {"UTC": 6, "Europe/Paris": 12, "Asia/Kolkata": 6}


@pytest.mark.parametrize("tz", ZONES)
def test_every_read_equals_a_brute_force_count(db, tz):
    @settings(max_examples=EXAMPLES[tz], deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(case=scenarios())
    def reads_equal_the_count(case):
        _check_reads(db, tz, case)

    reads_equal_the_count()


def _check_reads(db, tz, case):
    _, hits, start, end, pages = case
    clear(db)
    normal = [(ts, site, validation.page(page), n) for ts, site, page, n in hits]
    with queries.HitRecorder(db, flush_interval=3600) as recorder:
        for ts, site, page, n in hits:
            recorder.record(site, page, ts, n=n)
    zone = ZoneInfo(tz)
    columns = [validation.page(p) for p in pages]
    for granularity in ("minute", "hour", "day"):
        for site in SITES:
            for selection, cols in ((None, ["*"]), (pages, columns)):
                frame = queries.series(db, site, start, end, granularity, selection, tz=tz)
                buckets, counts = expected_series(normal, site, cols, granularity, start,
                                                  end, zone)
                _check(frame, zone, buckets, counts, cols)


@pytest.mark.parametrize("tz", ("Asia/Kathmandu", "America/St_Johns"))
@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=scenarios(), data=st.data())
def test_people_are_hits_less_bots_at_every_granularity(db, tz, case, data):
    """``humans``: each hit's bots drawn among its ``n``; the brute-force count of the
    rest, in zones a quarter and a half hour off whole hours."""
    _, hits, start, end, pages = case
    clear(db)
    bots = [data.draw(st.integers(0, n)) for *_, n in hits]
    with queries.HitRecorder(db, flush_interval=3600) as recorder:
        for (ts, site, page, n), b in zip(hits, bots, strict=True):
            recorder.record(site, page, ts, n=n, bots=b)
    people = [(ts, site, validation.page(page), n - b)
              for (ts, site, page, n), b in zip(hits, bots, strict=True) if n > b]
    zone = ZoneInfo(tz)
    columns = [validation.page(p) for p in pages]
    for granularity in ("minute", "hour", "day"):
        for selection, cols in ((None, ["*"]), (pages, columns)):
            frame = queries.series(db, SITES[0], start, end, granularity, selection, tz=tz,
                                   humans=True)
            buckets, counts = expected_series(people, SITES[0], cols, granularity, start,
                                              end, zone)
            _check(frame, zone, buckets, counts, cols)
            assert frame.attrs["unsplit"] == 0


def test_documents_without_bot_counters_count_as_people_and_say_so(db):
    ts = dt.datetime(2026, 11, 20, 10, 5, tzinfo=UTC)
    for collection, doc in ((schema.DAILY, {"daily": 3, "hourly": {"10": 3},
                                            "minute": {"10": {"5": 3}}}),
                            (schema.MONTHLY, {"monthly": 3, "daily": {"20": 3}})):
        date = schema.day_start(ts) if collection == schema.DAILY else schema.month_start(ts)
        doc_id = (schema.daily_id if collection == schema.DAILY else schema.monthly_id)(
            date, "old", "*")
        db[collection].insert_one({"_id": doc_id, "metadata": schema.metadata(date, "old", "*"),
                                   **doc})
    for granularity in ("minute", "hour", "day"):
        frame = queries.series(db, "old", ts.replace(hour=0, minute=0), ts.replace(hour=23),
                               granularity, humans=True)
        assert int(frame.to_numpy().sum()) == 3 and frame.attrs["unsplit"] == 3


def test_named_readers_match_series(db):
    start = dt.datetime(2026, 3, 28, 22, tzinfo=UTC)
    queries.log_hit(db, start + dt.timedelta(hours=3, minutes=7), "site-1", "/a")
    end = start + dt.timedelta(days=2)
    for reader, granularity in ((queries.minute_series, "minute"),
                                (queries.hourly_series, "hour"),
                                (queries.daily_series, "day")):
        pd.testing.assert_frame_equal(
            reader(db, "site-1", start, end, pages=["/a"], tz="Europe/Paris"),
            queries.series(db, "site-1", start, end, granularity, ["/a"], tz="Europe/Paris"))


def test_dst_days_have_23_and_25_hours(db):
    paris = ZoneInfo("Europe/Paris")
    for month, day, hours in ((3, 29, 23), (10, 25, 25), (10, 26, 24)):
        start = dt.datetime(2026, month, day, tzinfo=paris)
        end = dt.datetime(2026, month, day + 1, tzinfo=paris)
        assert len(queries.hourly_series(db, "site-1", start, end, tz="Europe/Paris")) == hours
        assert len(queries.daily_series(db, "site-1", start, end, tz="Europe/Paris")) == 1


def test_minute_series_across_midnight_reads_only_needed_hours(db):
    wrapped = WrappedDB(db)
    start = dt.datetime(2026, 11, 21, 23, 50, tzinfo=UTC)
    queries.log_hit(db, start + dt.timedelta(minutes=15), "site-1", "/a")
    frame = queries.minute_series(wrapped, "site-1", start, start + dt.timedelta(minutes=20))
    assert len(frame) == 20 and int(frame["*"].sum()) == 1
    (coll, (query, projection), _), = wrapped.finds
    assert coll == schema.DAILY
    assert set(projection) - {"_id"} == {"metadata", "minute.23", "minute.0"}


def test_daily_series_reads_monthly_documents(db):
    wrapped = WrappedDB(db)
    queries.log_hit(db, dt.datetime(2026, 2, 27, 5, tzinfo=UTC), "site-1", "/a")
    queries.log_hit(db, dt.datetime(2026, 3, 2, 5, tzinfo=UTC), "site-1", "/a")
    frame = queries.daily_series(wrapped, "site-1", dt.datetime(2026, 2, 1, tzinfo=UTC),
                                 dt.datetime(2026, 4, 1, tzinfo=UTC), pages=["/a"])
    assert len(frame) == 28 + 31 and int(frame["/a"].sum()) == 2
    assert [coll for coll, _, _ in wrapped.finds] == [schema.MONTHLY]


@pytest.mark.parametrize("granularity", ["minute", "hour", "day"])
def test_each_read_uses_the_site_page_date_index(db, granularity):
    for day in range(1, 4):
        for page in ("/a", "/b"):
            queries.log_hit(db, dt.datetime(2026, 5, day, 3, tzinfo=UTC), "site-1", page)
    wrapped = WrappedDB(db)
    queries.series(wrapped, "site-1", dt.datetime(2026, 5, 1, tzinfo=UTC),
                   dt.datetime(2026, 5, 3, tzinfo=UTC), granularity, ["/a"],
                   tz="Europe/Paris")
    assert wrapped.finds
    for collection, (query, *_), _ in wrapped.finds:
        assert indexes_used(db, collection, query) == {"site_page_date"}
