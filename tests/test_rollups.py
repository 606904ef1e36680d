"""Hierarchical rollups: equal to a brute-force count at every level, idempotent, safe
against a crash between any two steps, and late events count."""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes import UnseenDatabase, stored_count
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import queries
from dashboard.cli import main
from queries.events.collection import EventWriter
from queries.rollups import build as rollups
from queries.rollups import checks as rollup_checks
from queries.rollups.build import run_rollups, status_class
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
    out = {}
    for d in db[schema.ROLLUPS[level]].find({}):
        start = d["start"].astimezone(dt.UTC)
        assert d["_id"] == rollups.rollup_id(level, start, d["site"], d["page"])
        assert d["mean_bytes"] == pytest.approx(d["bytes"] / d["hits"])
        out[(d["site"], d["page"], start)] = (
            d["hits"], d["bytes"], {c: n for c, n in d["status"].items() if n})
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
def test_rollups_equal_a_brute_force_count_incrementally(embedded_db, first, late):
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


def test_a_late_event_recomputes_its_old_buckets(embedded_db):
    events = sample_events()
    t0 = dt.datetime.now(dt.UTC)
    insert(embedded_db, events, at=t0)
    run_rollups(embedded_db, now=t0 + rollups.SETTLE + dt.timedelta(seconds=1))
    late = event(START + dt.timedelta(hours=1, minutes=7), path="/a", status=503, size=7)
    insert(embedded_db, [late], at=t0 + dt.timedelta(hours=1))   # old time, new ingestion
    run = run_rollups(embedded_db, now=t0 + dt.timedelta(hours=1, seconds=1))
    assert run.buckets == {"hourly": 1, "daily": 1, "weekly": 1, "monthly": 1, "yearly": 1}
    assert_matches(embedded_db, [*events, late])


def test_events_in_flight_at_the_checkpoint_are_read_again(embedded_db):
    """The checkpoint trails the run by SETTLE: an event stamped just before the run
    but written after it still counts at the next run."""
    t0 = dt.datetime.now(dt.UTC)
    insert(embedded_db, sample_events()[:3], at=t0)
    run_rollups(embedded_db, now=t0 + dt.timedelta(seconds=1))
    straggler = event(START + dt.timedelta(days=3), path="/b.html")
    insert(embedded_db, [straggler], at=t0 + dt.timedelta(milliseconds=500))
    run_rollups(embedded_db, now=t0 + dt.timedelta(seconds=2))
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
        yearly = db[schema.ROLLUPS["yearly"]].find_one({"site": "demo", "page": "*"})
        assert yearly["hits"] == 60_000
    finally:
        db.client.close()


def test_a_bucket_another_run_inserted_meanwhile_is_replaced_not_lost(embedded_db):
    """write_level reads the current buckets, then inserts the new ones: a bucket written
    between the two (here: one its read cannot see) is replaced by the recomputed one."""
    start = dt.datetime(2025, 1, 2, 3, tzinfo=dt.UTC)
    row = {"hits": 5, "bytes": 50, "mean_bytes": 10.0, **{f"s{c}": 0 for c in rollups.CLASSES}}
    doc = rollups._document("hourly", "s1", "/", start, row)
    coll = embedded_db[schema.ROLLUPS["hourly"]]
    coll.insert_one({**doc, "hits": 1})
    assert rollups.write_level(UnseenDatabase(embedded_db), "hourly", [dict(doc)]) == 1
    assert coll.find_one({"_id": doc["_id"]})["hits"] == 5
    assert coll.count_documents({}) == 1


def test_levels_are_summed_in_sql_from_their_covering_index(embedded_db):
    """With hitboard's indexes each level's $group reads its source level's covering
    index alone: the embedded store runs it in SQL (no document decoded), and the
    counts still equal a brute-force count."""
    queries.ensure_indexes(embedded_db)
    events = sample_events()
    insert(embedded_db, events)
    statements = []
    con = embedded_db.client.store.reader()
    con.set_trace_callback(statements.append)
    try:
        run_rollups(embedded_db)
    finally:
        con.set_trace_callback(None)
    assert_matches(embedded_db, events)
    for source, key in rollups.PARENT.values():
        table = f"{embedded_db.name}.{schema.ROLLUPS[source]}"
        grouped = [sql for sql in statements
                   if "GROUP BY" in sql and f'"{table}"' in sql and f'"k:{key}"' in sql]
        assert grouped, source
        plan = " ".join(row[3] for row in con.execute("EXPLAIN QUERY PLAN " + grouped[0]))
        assert f"COVERING INDEX {table}/site_{key}_sums" in plan, plan


def test_an_older_stores_parent_key_index_gives_way_to_the_covering_one(embedded_db):
    hourly = embedded_db[schema.ROLLUPS["hourly"]]
    hourly.create_index([("site", 1), ("day", 1)], name="site_day")
    rollups.ensure_rollup_indexes(embedded_db)
    rollups.ensure_rollup_indexes(embedded_db)          # and again: nothing changes
    info = hourly.index_information()
    assert "site_day" not in info
    assert [field for field, _ in info["site_day_sums"]["key"]] == [
        "site", "day", "page", *rollups.SUMMED]
