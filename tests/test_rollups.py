"""Hierarchical rollups: equal to a brute-force count at every level, idempotent, safe
against a crash between any two steps, and late events count."""

from __future__ import annotations

import datetime as dt
import json
import threading
import zlib
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes import UnseenDatabase, stored_count
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pymongo.errors import AutoReconnect

import queries
from dashboard.cli import main
from queries.events.writer import EventWriter
from queries.rollups import build as rollups
from queries.rollups import checks as rollup_checks
from queries.rollups import documents, upgrade
from queries.rollups.build import run_rollups
from queries.rollups.documents import status_class
from queries.stats import schema

START = dt.datetime(2024, 12, 28, tzinfo=dt.UTC)   # weeks, months and a year end nearby
PATHS = ("/", "/a", "/b.html")


def event(time, site="s1", path="/", status=200, size=100):
    return {"time": time, "site": site, "host": "1.2.3.4", "method": "GET", "path": path,
            "query": "", "status": status, "bytes": size, "referrer": None, "user_agent": None}


def insert(db, events, at=None):
    writer = EventWriter(db, clock=(lambda: at) if at else None)
    for e in events:
        writer.add(dict(e))
    writer.flush()
    assert writer.totals.failed == 0


def bucket(level, t):
    day = dt.datetime(t.year, t.month, t.day, tzinfo=dt.UTC)
    return {"hourly": t.replace(minute=0, second=0, microsecond=0), "daily": day,
            "weekly": day - dt.timedelta(days=day.weekday()), "monthly": day.replace(day=1),
            "yearly": day.replace(month=1, day=1)}[level]


def brute_force(events, level) -> dict:
    """(site, page, start) -> (hits, bytes, status classes), by looping over events."""
    out = defaultdict(lambda: [0, 0, Counter()])
    for e in events:
        for page in (e["path"], "*"):
            row = out[(e["site"], page, bucket(level, e["time"]))]
            row[0] += 1
            row[1] += e["bytes"]
            row[2][status_class(e["status"])] += 1
    return {k: (h, b, {c: n for c, n in s.items() if n}) for k, (h, b, s) in out.items()}


def stored(db, level) -> dict:
    """(site, page, start) -> (hits, bytes, status classes), from the stored buckets:
    each page's row, and the site's totals as ``*``, which must equal the rows' sum."""
    out = {}
    for d in db[schema.ROLLUPS[level]].find({}):
        start = d["start"].astimezone(dt.UTC)
        assert d["_id"] == documents.rollup_id(level, start, d["site"], d["part"])
        if d["part"] == 0:
            assert d["mean_bytes"] == pytest.approx(d["bytes"] / d["hits"])
            out[(d["site"], "*", start)] = (
                d["hits"], d["bytes"], {c: n for c, n in d["status"].items() if n})
        for row in documents.page_rows(d, {row[0] for row in documents.rows(d)}):
            out[(d["site"], row["page"], start)] = (
                row["hits"], row["bytes"], {c: n for c, n in row["status"].items() if n})
    return out


def assert_matches(db, events):
    for level in schema.ROLLUP_LEVELS:
        assert stored(db, level) == brute_force(events, level), level


def clear(db):
    for name in (schema.EVENTS, schema.CHECKPOINTS, *schema.ROLLUPS.values()):
        db[name].delete_many({})


events_strategy = st.lists(st.builds(
    event,
    time=st.integers(0, 40 * 24 * 3600).map(lambda s: START + dt.timedelta(seconds=s)),
    site=st.sampled_from(["s1", "s2"]),
    path=st.sampled_from(PATHS),
    status=st.sampled_from([200, 204, 301, 304, 404, 500, 503, 101, None]),
    size=st.integers(0, 10_000),
), min_size=1, max_size=60)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=events_strategy, late=events_strategy)
def test_rollups_equal_a_brute_force_count_incrementally(embedded_db, frozen_clock, first,
                                                         late):
    clear(embedded_db)
    t0 = dt.datetime.now(dt.UTC)
    insert(embedded_db, first, at=t0)
    run_rollups(embedded_db, now=t0 + dt.timedelta(minutes=1))
    assert_matches(embedded_db, first)
    # A second batch, ingested later, lands in old and new buckets alike.
    insert(embedded_db, late, at=t0 + dt.timedelta(minutes=5))
    run_rollups(embedded_db, now=t0 + dt.timedelta(minutes=6))
    assert_matches(embedded_db, first + late)


def sample_events():
    return [event(START + dt.timedelta(hours=h, minutes=h), path=PATHS[h % 3],
                  status=(200, 404, 500, 301)[h % 4], size=h) for h in range(0, 24 * 20, 5)]


def test_pipelines_run_on_every_backend(db):
    events = sample_events()
    insert(db, events)
    run = run_rollups(db)
    assert_matches(db, events)
    assert run.buckets["yearly"] == 2      # 2024 and 2025
    assert run.buckets["hourly"] == len({bucket("hourly", e["time"]) for e in events})


@pytest.mark.parametrize("keep_rows", [0, 40])
def test_a_run_keeping_few_or_no_rows_reads_the_rest_from_the_documents(
        embedded_db, monkeypatch, keep_rows):
    """The levels above hourly read the rows a run computed from memory while they fit
    (``build.KEEP_ROWS``), the others from the documents written: the same counts."""
    monkeypatch.setattr(rollups, "KEEP_ROWS", keep_rows)
    events = sample_events()
    insert(embedded_db, events)
    run_rollups(embedded_db)
    assert_matches(embedded_db, events)


def test_repeated_runs_change_nothing(embedded_db):
    events = sample_events()
    insert(embedded_db, events)
    run_rollups(embedded_db)
    first = {level: stored(embedded_db, level) for level in schema.ROLLUP_LEVELS}
    embedded_db[schema.CHECKPOINTS].delete_many({})      # as if every run were the first
    for _ in range(2):
        again = run_rollups(embedded_db)
        assert sum(again.documents.values()) == 0        # identical values: nothing rewritten
    assert {level: stored(embedded_db, level) for level in schema.ROLLUP_LEVELS} == first


@pytest.mark.parametrize("crash_level", schema.ROLLUP_LEVELS)
def test_a_crash_between_steps_never_counts_twice(embedded_db, monkeypatch, crash_level):
    events = sample_events()
    insert(embedded_db, events[:40])
    run_rollups(embedded_db)
    insert(embedded_db, events[40:])
    real_write = rollups.write_level

    def crash_after(db, level, docs):
        written = real_write(db, level, docs)
        if level == crash_level:
            raise RuntimeError("power cut")
        return written

    monkeypatch.setattr(rollups, "write_level", crash_after)
    before = rollups.checkpoint(embedded_db)["watermark"]
    with pytest.raises(RuntimeError, match="power cut"):
        run_rollups(embedded_db)
    assert rollups.checkpoint(embedded_db)["watermark"] == before   # not advanced
    monkeypatch.setattr(rollups, "write_level", real_write)
    run_rollups(embedded_db)
    run_rollups(embedded_db)
    assert_matches(embedded_db, events)


def test_a_late_event_recomputes_its_old_buckets(embedded_db, frozen_clock):
    events = sample_events()
    t0 = dt.datetime.now(dt.UTC)
    insert(embedded_db, events, at=t0)
    run_rollups(embedded_db, now=t0 + rollups.SETTLE + dt.timedelta(seconds=1))
    late = event(START + dt.timedelta(hours=1, minutes=7), path="/a", status=503, size=7)
    insert(embedded_db, [late], at=t0 + dt.timedelta(hours=1))   # old time, new ingestion
    run = run_rollups(embedded_db, now=t0 + dt.timedelta(hours=1, seconds=1))
    assert run.buckets == {"hourly": 1, "daily": 1, "weekly": 1, "monthly": 1, "yearly": 1}
    assert_matches(embedded_db, [*events, late])


def test_events_in_flight_at_the_checkpoint_are_read_again(embedded_db, frozen_clock):
    """The checkpoint trails the run by SETTLE: an event stamped just before the run
    but written after it still counts at the next run."""
    t0 = dt.datetime.now(dt.UTC)
    insert(embedded_db, sample_events()[:3], at=t0)
    run_rollups(embedded_db, now=t0 + dt.timedelta(seconds=1))
    straggler = event(START + dt.timedelta(days=3), path="/b.html")
    insert(embedded_db, [straggler], at=t0 + dt.timedelta(milliseconds=500))
    run_rollups(embedded_db, now=t0 + dt.timedelta(seconds=2))
    assert_matches(embedded_db, [*sample_events()[:3], straggler])


def test_an_event_written_after_a_store_outage_longer_than_settle_is_rolled_up(
        embedded_db, frozen_clock):
    """A patient writer tries again through an outage of two minutes while a rollup run
    moves its checkpoint past the first try: the event is stamped when it is written,
    so the next run reads it (stamped at the first try, it was never rolled up)."""
    t0 = dt.datetime.now(dt.UTC)
    insert(embedded_db, sample_events()[:3], at=t0)
    clock = {"now": t0}
    writer = EventWriter(embedded_db, clock=lambda: clock["now"])
    writer.patience = threading.Event()
    real, tries = writer.collection, []

    class Outage:
        def insert_many(self, docs, ordered):
            tries.append(clock["now"])
            if len(tries) == 1:
                run_rollups(embedded_db, now=t0 + dt.timedelta(minutes=1))
            if len(tries) < 3:
                clock["now"] += dt.timedelta(minutes=1)
                raise AutoReconnect("the store is away")
            return real.insert_many(docs, ordered=ordered)

    writer.collection = Outage()
    straggler = event(START + dt.timedelta(days=3), path="/b.html")
    writer.add(dict(straggler))
    writer.flush()
    assert writer.totals.failed == 0 and len(tries) == 3
    run_rollups(embedded_db, now=t0 + dt.timedelta(minutes=3))
    assert_matches(embedded_db, [*sample_events()[:3], straggler])


def test_rollups_after_ingest_equal_the_statistics_bucket_for_bucket(tmp_path):
    """The real log six times over (60,000 lines: more than a capped store kept): the
    rollups `hitboard ingest` makes at its end hold every hit, at every level."""
    log = Path(__file__).resolve().parents[2] / "shared" / "data" / "apache_combined_2015.log"
    if not log.exists():
        pytest.skip(f"{log} is not here")
    big = tmp_path / "six.log"
    big.write_bytes(log.read_bytes() * 6)
    store = str(tmp_path / "store")
    result = CliRunner().invoke(main, ["ingest", str(big), "--site", "demo", "--store", store])
    assert result.exit_code == 0, result.output
    assert "rollups:" in result.output
    db = queries.connect(store, read_only=True)
    try:
        month = db[schema.MONTHLY].find_one({"metadata.site": "demo", "metadata.page": "*"})
        assert month["monthly"] == stored_count(db) == 60_000
        for level, buckets in (("hour", 84), ("day", 4), ("month", 1)):
            check = rollup_checks.consistency(db, "demo", level)
            assert check.checked == buckets and check.ok, check.differing
        yearly = db[schema.ROLLUPS["yearly"]].find_one({"site": "demo", "part": 0})
        assert yearly["hits"] == 60_000
    finally:
        db.client.close()


def test_a_bucket_another_run_inserted_meanwhile_is_replaced_not_lost(embedded_db):
    """write_level reads the current buckets, then inserts the new ones: a bucket written
    between the two (here: one its read cannot see) is replaced by the recomputed one."""
    start = dt.datetime(2025, 1, 2, 3, tzinfo=dt.UTC)
    [doc] = documents.build("hourly", "s1", start, {"/": [5, 50, 5, 0, 0, 0, 0]})
    coll = embedded_db[schema.ROLLUPS["hourly"]]
    coll.insert_one({**doc, "hits": 1, "digest": "other"})
    assert documents.write_level(UnseenDatabase(embedded_db), "hourly", [dict(doc)]) == 1
    assert coll.find_one({"_id": doc["_id"]})["hits"] == 5
    assert coll.count_documents({}) == 1


def test_a_bucket_of_many_pages_is_cut_into_parts_and_shrinks_back(embedded_db, monkeypatch):
    """No document nears MongoDB's 16 MB: past PART_PAGES pages a bucket has parts, each
    read back, and parts a bucket no longer needs are removed."""
    monkeypatch.setattr(documents, "PART_PAGES", 2)
    events = [event(START + dt.timedelta(minutes=i), path=f"/{i}") for i in range(5)]
    insert(embedded_db, events)
    run_rollups(embedded_db)
    assert_matches(embedded_db, events)
    hours = embedded_db[schema.ROLLUPS["hourly"]]
    assert sorted(d["part"] for d in hours.find({})) == [0, 1, 2]
    monkeypatch.setattr(documents, "PART_PAGES", 3)
    embedded_db[schema.CHECKPOINTS].delete_many({})
    run_rollups(embedded_db)
    assert sorted(d["part"] for d in hours.find({})) == [0, 1]
    assert_matches(embedded_db, events)


def test_an_older_stores_page_buckets_are_moved_into_site_buckets(embedded_db):
    """Rollups of one document per page and bucket are converted on first open, even
    where no raw event stands behind them any more, and their indexes dropped; opening
    again changes nothing."""
    events = sample_events()
    for level in schema.ROLLUP_LEVELS:
        coll = embedded_db[schema.ROLLUPS[level]]
        coll.create_index([("site", 1), ("page", 1), ("start", 1)], name=upgrade.MARK)
        coll.insert_many([{
            "_id": f"{start:%Y%m%d%H}/{site}{page}", "site": site, "page": page,
            "start": start, "hits": hits, "bytes": size, "mean_bytes": size / hits,
            "status": {c: status.get(c, 0) for c in documents.CLASSES}}
            for (site, page, start), (hits, size, status) in brute_force(events, level).items()])
    queries.ensure_indexes(embedded_db)
    for level in schema.ROLLUP_LEVELS:
        coll = embedded_db[schema.ROLLUPS[level]]
        assert coll.count_documents(upgrade.OLD) == 0
        assert set(coll.index_information()) == {"_id_", "site_start"}
    assert_matches(embedded_db, events)          # no event was ever written: converted
    queries.ensure_indexes(embedded_db)
    assert_matches(embedded_db, events)


def test_a_bucket_s_pages_are_deflated_past_the_fastest_level_and_read_back():
    rows = [[f"/wp-content/uploads/2015/{i % 12:02d}/image-{i}.jpg", i % 7 + 1, 1_000 * i,
             i % 7 + 1, 0, 0, 0, 0] for i in range(3_000)]
    (doc,) = documents.build_rows("hourly", "s", dt.datetime(2015, 5, 17, tzinfo=dt.UTC),
                                  rows)
    assert documents.rows(doc) == rows
    fastest = zlib.compress(json.dumps(rows, separators=(",", ":")).encode(), 1)
    assert len(doc["pages"]) < 0.95 * len(fastest)
