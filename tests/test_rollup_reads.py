"""Reading rollups: series, tables, status, and agreement with the pre-aggregated
statistics on the real log, bucket by bucket at every level."""

from __future__ import annotations

import csv
import datetime as dt
import io
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import queries
from dashboard.cli import main
from queries.ingest import run as ingest
from queries.rollups import checks as rollup_checks
from queries.rollups import reads as rollup_reads
from queries.rollups.build import run_rollups
from queries.rollups.documents import rollup_id
from queries.stats import schema

LOG = Path(__file__).resolve().parents[2] / "shared" / "data" / "apache_combined_2015.log"
MAY = (dt.datetime(2015, 5, 1, tzinfo=dt.UTC), dt.datetime(2015, 6, 1, tzinfo=dt.UTC))


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """The real log ingested (hits and events) and rolled up, in a closed store."""
    if not LOG.exists():
        pytest.skip(f"{LOG} is not here")
    path = str(tmp_path_factory.mktemp("rollups") / "store")
    db = queries.connect(path)
    queries.ensure_indexes(db)
    ingestor = ingest.Ingestor(db, site="demo")
    ingest.ingest_file(ingestor, LOG, "demo")
    ingestor.close()
    run_rollups(db)
    db.client.close()
    return path


@pytest.fixture(scope="module")
def db(store):
    database = queries.connect(store, read_only=True)
    yield database
    database.client.close()


@pytest.mark.parametrize("level", rollup_reads.GRANULARITIES)
def test_rollups_agree_with_pre_aggregated_hits_for_every_bucket(db, level):
    check = rollup_checks.consistency(db, "demo", level)
    assert check.ok, check.differing
    assert check.checked == {"hour": 84, "day": 4, "week": 2, "month": 1, "year": 1}[level]


def test_rollups_agree_per_page_too(db):
    day = dt.datetime(2015, 5, 18, tzinfo=dt.UTC)
    pages = ["/favicon.ico", "/robots.txt", "/"]
    rolled = rollup_reads.rollup_series(db, "demo", day, day + dt.timedelta(days=1), "hour",
                                        pages)
    stats = queries.hourly_series(db, "demo", day, day + dt.timedelta(days=1), pages)
    assert (rolled.to_numpy() == stats.to_numpy()).all() and rolled.to_numpy().sum() > 0


def test_a_differing_bucket_is_named(db):
    # A writer beside the read-only connection plants the difference, then removes it.
    writer = queries.connect(str(db.client.store.directory))
    daily = writer[schema.ROLLUPS["daily"]]
    bucket = {"_id": rollup_id("daily", dt.datetime(2015, 5, 18, tzinfo=dt.UTC), "demo")}
    daily.update_one(bucket, {"$inc": {"hits": 5}})
    try:
        check = rollup_checks.consistency(db, "demo", "day")
    finally:
        daily.update_one(bucket, {"$inc": {"hits": -5}})
        writer.client.close()
    assert not check.ok
    assert check.differing.to_dict("index") == {
        pd_time("2015-05-18"): {"page": "*", "rollup": 2898, "stats": 2893}}


def pd_time(text):
    return pd.Timestamp(text, tz="UTC")


def test_table_has_every_metric(db):
    table = rollup_reads.rollup_table(db, "demo", "month", *MAY)
    row = table.iloc[0]
    assert list(table.index) == [pd_time("2015-05-01")]
    assert row["hits"] == 10_000 and row["2xx"] + row["3xx"] + row["4xx"] + row["5xx"] == 10_000
    assert row["mean_bytes"] == pytest.approx(row["bytes"] / 10_000)
    assert row["error_rate"] == pytest.approx((row["4xx"] + row["5xx"]) / 10_000)


def test_series_metrics_and_bad_input(db):
    weekly = rollup_reads.rollup_series(db, "demo", *MAY, "week")
    assert weekly["*"].sum() == 10_000 and weekly.index[0] == pd_time("2015-04-27")
    rate = rollup_reads.rollup_series(db, "demo", *MAY, "day", metric="error_rate")
    assert 0 < rate["*"].max() < 1
    with pytest.raises(queries.InvalidTimeZoneError):
        rollup_reads.rollup_series(db, "demo", *MAY, "day", tz="Europe/Paris")
    with pytest.raises(queries.InvalidRangeError):
        rollup_reads.rollup_series(db, "demo", *MAY, "fortnight")
    with pytest.raises(queries.InvalidRangeError):
        rollup_reads.rollup_series(db, "demo", *MAY, "day", metric="speed")


def test_status_reports_the_last_run(db):
    status = rollup_reads.rollup_status(db)
    assert status.last_run is not None and status.events_waiting == 0
    assert status.documents["yearly"] == 1 and status.lag_s >= 0     # 2015, every page in it


@pytest.mark.parametrize("granularity, expected", [
    ("week", {"2015-05-11": 1632, "2015-05-18": 8368}),
    ("month", {"2015-05-01": 10_000}),
    ("year", {"2015-01-01": 10_000}),
])
def test_report_from_rollups(store, granularity, expected):
    result = CliRunner().invoke(main, [
        "report", "--site", "demo", "--source", "rollup", "--granularity", granularity,
        "--start", "2015-05-11", "--end", "2015-05-25", "--store", store])
    assert result.exit_code == 0, result.output
    rows = {r["time"][:10]: int(r["hits"]) for r in csv.DictReader(io.StringIO(result.stdout))}
    assert {k: v for k, v in rows.items() if v} == expected


def test_rollup_command_runs_once(tmp_path):
    result = CliRunner().invoke(main, ["rollup", "--store", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert "buckets rewritten: hourly 0" in result.output


def test_a_planted_hour_is_caught_at_every_level_and_by_the_invariants(db):
    """+5 on one hour of a stats.daily document: each level compares with the statistics
    built the way the level is (hours summed up), so every level sees it; the document's
    own counters no longer agree, and the invariants name it."""
    assert rollup_checks.invariants(db, "demo", *MAY) == []
    writer = queries.connect(str(db.client.store.directory))  # beside the read-only one
    daily = writer[schema.DAILY]
    daily.update_one({"_id": "20150518/demo*"}, {"$inc": {"hourly.10": 5}})
    try:
        checks = {level: rollup_checks.consistency(db, "demo", level)
                  for level in rollup_reads.GRANULARITIES}
        breaches = rollup_checks.invariants(db, "demo", *MAY)
    finally:
        daily.update_one({"_id": "20150518/demo*"}, {"$inc": {"hourly.10": -5}})
        writer.client.close()
    starts = {"hour": "2015-05-18 10:00", "day": "2015-05-18", "week": "2015-05-18",
              "month": "2015-05-01", "year": "2015-01-01"}
    for level, check in checks.items():
        assert list(check.differing.index) == [pd_time(starts[level])], level
        row = check.differing.iloc[0]
        assert row["stats"] - row["rollup"] == 5, level
    assert [(b.collection, b.id) for b in breaches] == [(schema.DAILY, "20150518/demo*")]
    assert "daily 2,893, Σ hourly 2,898, Σ minutes 2,893" in breaches[0].problem
    assert "hour 10:" in breaches[0].problem


def test_a_monthly_day_that_disagrees_with_its_daily_document_is_named(db):
    writer = queries.connect(str(db.client.store.directory))  # beside the read-only one
    monthly = writer[schema.MONTHLY]
    monthly.update_one({"_id": "201505/demo/"}, {"$inc": {"daily.19": 2, "monthly": 2}})
    try:
        breaches = rollup_checks.invariants(db, "demo", *MAY, pages=["/"])
    finally:
        monthly.update_one({"_id": "201505/demo/"}, {"$inc": {"daily.19": -2, "monthly": -2}})
        writer.client.close()
    assert [(b.collection, b.id) for b in breaches] == [(schema.MONTHLY, "201505/demo/")]
    assert "daily.19" in breaches[0].problem and "the day's document says" in breaches[0].problem
