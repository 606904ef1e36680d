"""Backfill: pre-aggregated documents whose totals are exact and agree with the reads."""

import datetime as dt
from collections import Counter

import numpy as np
import pytest
from fakes import UnseenCollection

import queries
from queries import DayCounts, InvalidRangeError, backfill
from queries.bulk import IDS_PER_QUERY
from queries.jobs.backfill import _insert_or_add
from queries.loadgen import TrafficModel, backfill_history
from queries.stats import schema

NOW = dt.datetime(2026, 11, 21, 13, 45, 30, tzinfo=dt.UTC)
TODAY = NOW.replace(hour=0, minute=0, second=0)
MODEL = TrafficModel(sites=2, pages=4, seed=3)
RATE = 0.05  # hits/s: sparse minutes keep the documents small on every backend


def _sum_field(db, collection, field):
    sums = Counter()
    for doc in db[collection].find({}, {"metadata": 1, field: 1}):
        sums[(doc["metadata"]["site"], doc["metadata"]["page"])] += doc.get(field, 0)
    return sums


def test_documents_sum_to_the_returned_totals_and_reads_agree(db):
    progress = []
    totals = backfill_history(db, MODEL, rate=RATE, days=2, now=NOW,
                              progress=lambda done, total: progress.append((done, total)))
    assert totals.hits == sum(totals.site_hits(s) for s in MODEL.site_names) > 0
    assert _sum_field(db, schema.DAILY, "daily") == totals.by_page
    assert _sum_field(db, schema.MONTHLY, "monthly") == totals.by_page
    for site in MODEL.site_names:
        pages = MODEL.page_names[site]
        start = TODAY - dt.timedelta(days=2)
        frame = queries.daily_series(db, site, start, NOW, pages=pages)
        assert frame.sum().to_dict() == {p: totals.by_page[(site, p)] for p in pages}
        whole = queries.hourly_series(db, site, start, NOW)
        assert int(whole["*"].sum()) == totals.site_hits(site)
    assert progress[-1] == (6, 6)
    assert [done for done, _ in progress] == sorted(done for done, _ in progress)


def test_documents_have_the_shape_of_live_traffic_and_star_is_the_sum(db):
    backfill_history(db, MODEL, rate=RATE, days=1, now=NOW)
    site = MODEL.site_names[0]
    day = TODAY - dt.timedelta(days=1)
    docs = {d["metadata"]["page"]: d for d in
            db[schema.DAILY].find({"metadata.site": site, "metadata.date": day})}
    star = docs.pop("*")
    assert star["_id"] == schema.daily_id(day, site, "*")
    assert star["metadata"] == schema.metadata(day, site, "*")
    assert star["daily"] == sum(d["daily"] for d in docs.values())
    for hour in range(24):
        h = str(hour)
        assert star["hourly"][h] == sum(d["hourly"].get(h, 0) for d in docs.values())
        assert star["hourly"][h] == sum(star["minute"][h].values())
        for minute, hits in star["minute"][h].items():
            assert hits == sum(d["minute"].get(h, {}).get(minute, 0) for d in docs.values())
    month = db[schema.MONTHLY].find_one({"_id": schema.monthly_id(TODAY, site, "*")})
    assert month["daily"]["20"] == star["daily"]


def test_today_stops_at_now_and_counts_add_to_live_hits(db):
    site, page = MODEL.site_names[0], MODEL.page_names[MODEL.site_names[0]][0]
    queries.register_synthetic(db, [site])
    queries.log_hit(db, NOW - dt.timedelta(minutes=5), site, page)
    totals = backfill_history(db, MODEL, rate=RATE, days=1, now=NOW)
    frame = queries.minute_series(db, site, TODAY, TODAY + dt.timedelta(days=1), pages=[page])
    assert frame.loc[frame.index > NOW.replace(second=0), page].sum() == 0
    backfilled_today = int(MODEL.day_counts(0, TODAY, RATE, until=NOW)[0].sum())
    assert int(frame[page].sum()) == backfilled_today + 1
    today = db[schema.DAILY].find_one({"_id": schema.daily_id(TODAY, site, page)})
    assert today["daily"] == backfilled_today + 1
    yesterday = int(MODEL.day_counts(0, TODAY - dt.timedelta(days=1), RATE)[0].sum())
    assert totals.by_page[(site, page)] == yesterday + backfilled_today


def test_backfill_refuses_bad_input(db):
    good = np.zeros((1, 1440), dtype="int64")
    with pytest.raises(InvalidRangeError):
        backfill_history(db, MODEL, rate=1, days=0, now=NOW)
    with pytest.raises(InvalidRangeError):
        backfill_history(db, MODEL, rate=1, days=401, now=NOW)
    bad = [DayCounts("s", TODAY, ["/a"], np.zeros((1, 60), dtype="int64")),
           DayCounts("s", TODAY, ["/a"], good - 1),
           DayCounts("s", TODAY, ["/a"], good.astype(float)),
           DayCounts("s", TODAY + dt.timedelta(hours=1), ["/a"], good),
           DayCounts("s", TODAY, ["*"], good),
           DayCounts("s", TODAY, ["/a", "a"], np.zeros((2, 1440), dtype="int64"))]
    for item in bad:
        with pytest.raises(InvalidRangeError):
            backfill(db, [item])
    assert db[schema.DAILY].count_documents({}) == 0


def test_a_document_created_concurrently_is_added_to_not_overwritten(db):
    coll = db[schema.DAILY]
    day = dt.datetime(2015, 5, 17, tzinfo=dt.UTC)
    d1, d2 = (schema.daily_id(day, "s", page) for page in ("/a", "/b"))
    coll.insert_one({"_id": d1, "metadata": schema.metadata(day, "s", "/a"), "daily": 5,
                     "hourly": {"1": 5}})
    docs = {d1: ({"metadata": schema.metadata(day, "s", "/a")}, {"daily": 2, "hourly": {"1": 2}}),
            d2: ({"metadata": schema.metadata(day, "s", "/b")}, {"daily": 3, "hourly": {"2": 3}})}
    assert _insert_or_add(UnseenCollection(coll), docs) == (1, 1)
    assert coll.find_one({"_id": d1})["hourly"] == {"1": 7}
    assert coll.find_one({"_id": d2})["daily"] == 3
    assert _insert_or_add(coll, docs) == (0, 2)
    assert coll.find_one({"_id": d2})["hourly"] == {"2": 6}


class _FindSpy:
    """A database whose collections note every ``find`` filter, then run it."""

    def __init__(self, db):
        self._db, self.filters = db, []

    def __getitem__(self, name):
        return _SpiedCollection(self._db[name], self.filters)

    def __getattr__(self, name):
        return getattr(self._db, name)


class _SpiedCollection:
    def __init__(self, collection, filters):
        self._collection, self._filters = collection, filters

    def find(self, filter=None, *args, **kwargs):
        self._filters.append(filter or {})
        return self._collection.find(filter, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._collection, name)


def test_look_ups_by_id_stay_short_however_much_history_is_stored(embedded_db):
    """A site-day of many pages is looked up (stats, seeds, rollups) a bounded number of
    ids at a time, the same queries into an empty store as into one holding history: a
    longer ``$in`` made the embedded store scan the whole collection, so every batch
    of a year's backfill cost more than the one before."""
    pages = [f"/p{i}" for i in range(700)]
    counts = np.zeros((len(pages), 1440), dtype="int64")
    counts[:, 0] = 1
    spy, runs = _FindSpy(embedded_db), []
    for offset in (2, 1):
        day = TODAY - dt.timedelta(days=offset)
        totals = backfill(spy, [DayCounts("s", day, pages, counts)])
        assert totals.site_hits("s") == len(pages)
        runs.append([len(f["_id"]["$in"]) for f in spy.filters if "_id" in f])
        spy.filters.clear()
    assert runs[0] == runs[1]
    assert max(runs[0]) == IDS_PER_QUERY
    assert embedded_db[schema.DAILY].count_documents({}) == 2 * (len(pages) + 1)


@pytest.mark.volume
def test_backfill_writes_the_rollups_of_its_history(db):
    """History has no raw events; its rollups are written with it, so the Rollups page's
    badge is green from the first look, at every level, and bytes and statuses look real."""
    from queries.rollups import checks as rollup_checks
    from queries.rollups import reads as rollup_reads
    from queries.rollups.build import run_rollups

    model = TrafficModel(sites=1, pages=2, seed=3)   # small: ~1,700 hourly rollups
    totals = backfill_history(db, model, rate=RATE, days=22, now=NOW)
    assert totals.rollup_documents > 0
    run_rollups(db, now=NOW)           # the server's job: covers up to NOW's hour
    site = model.site_names[0]
    last = {"hour": NOW.replace(minute=0, second=0) - dt.timedelta(hours=1),
            "day": TODAY - dt.timedelta(days=1), "week": TODAY - dt.timedelta(days=12),
            "month": dt.datetime(2026, 10, 1, tzinfo=dt.UTC), "year": None}
    for level in rollup_reads.GRANULARITIES:
        check = rollup_checks.consistency(db, site, level)
        assert check.ok, (level, check.differing)
        assert check.last == last[level] and check.in_progress == 1, level  # now: not yet
    hours = rollup_reads.rollup_series(db, site, TODAY - dt.timedelta(days=22), NOW, "hour")
    stats = queries.hourly_series(db, site, TODAY - dt.timedelta(days=22), NOW)
    assert (hours["*"].to_numpy() == stats["*"].to_numpy()).all()   # today's hours too
    table = rollup_reads.rollup_table(db, site, "month", TODAY - dt.timedelta(days=22), NOW)
    assert (table[["2xx", "3xx", "4xx", "5xx", "other"]].sum(axis=1) == table["hits"]).all()
    assert (table["4xx"] > 0).all() and (table["mean_bytes"] > 500).all()
    assert rollup_checks.invariants(db, site, TODAY - dt.timedelta(days=22), NOW) == []


def test_live_events_in_a_backfilled_hour_add_to_its_rollup(db):
    """The day in progress: backfilled minutes, then live hits with events in the same
    hour. The hour's rollup is both, as the statistics are."""
    from queries.events.writer import EventWriter
    from queries.rollups import checks as rollup_checks
    from queries.rollups.build import run_rollups

    backfill_history(db, MODEL, rate=RATE, days=1, now=NOW)
    site, page = MODEL.site_names[0], MODEL.page_names[MODEL.site_names[0]][0]
    live = NOW + dt.timedelta(minutes=5)
    queries.log_hit(db, live, site, page)
    writer = EventWriter(db)
    writer.add({"time": live, "site": site, "host": "h", "method": "GET", "path": page,
                "query": "", "status": 200, "bytes": 10, "referrer": None, "user_agent": None})
    writer.flush()
    run_rollups(db)
    hour = NOW.replace(minute=0, second=0)
    check = rollup_checks.consistency(db, site, "hour", hour, hour + dt.timedelta(hours=1),
                                      pages=[page])
    assert check.checked == 1 and check.ok, check.differing
