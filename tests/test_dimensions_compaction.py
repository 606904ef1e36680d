"""Visitor sketch compaction, scheduled: every rollup run (the server's job, ``hitboard
rollup``) merges the partial sketch documents of the buckets closed since the last run,
keeps every count, and loses nothing beside a writer, on every backend present."""

from __future__ import annotations

import datetime as dt
import threading

import time_machine
from click.testing import CliRunner

from dashboard.cli import main
from dashboard.rollup_job import RollupJob
from queries.counting import DimensionRecorder
from queries.dimensions import classify, reads, sketches
from queries.dimensions.counters import DAILY, HOURLY, MONTHLY
from queries.rollups.build import run_rollups

SITE = "shop.example"
T0 = dt.datetime(2026, 3, 14, 9, 30, tzinfo=dt.UTC)
DAY = (dt.datetime(2026, 3, 14, tzinfo=dt.UTC), dt.datetime(2026, 3, 15, tzinfo=dt.UTC))
MONTH = (dt.datetime(2026, 3, 1, tzinfo=dt.UTC), dt.datetime(2026, 4, 1, tzinfo=dt.UTC))
MONTH_CLOSED = dt.datetime(2026, 4, 15, 12, tzinfo=dt.UTC)   # a clock past the whole MONTH
CHROME = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
          "Chrome/126.0 Safari/537.36")
BUCKETS = {HOURLY: sketches.HOURLY, DAILY: sketches.DAILY, MONTHLY: sketches.MONTHLY}


def _recorder(db):
    return DimensionRecorder(db, flush_interval=3600)


def _hit(i: int, referrer: str = "https://news.example/"):
    return classify(SITE, "/", status=200, agent=CHROME, referrer_url=referrer,
                    address=f"8.8.{i // 250}.{i % 250}")


def _two_writers(db, n: int = 300) -> None:
    """Two processes' worth of partial sketches of one hour, day and month: ``n``
    visitors, the first hundred seen by both."""
    first, second = _recorder(db), _recorder(db)
    for i in range(n):
        (first if i % 2 else second).record(SITE, "/", T0, _hit(i))
        if i < 100:
            (second if i % 2 else first).record(SITE, "/", T0, _hit(i))
    first.close()
    second.close()


def _counts(db) -> dict:
    """Everything a reader sees: counters, visitors, a breakdown with its visitors."""
    frame = reads.breakdown(db, SITE, "referrer", *DAY)
    return {"counters": sorted((c, d["hits"]) for c in BUCKETS for d in db[c].find()),
            "day": reads.visitors(db, SITE, *DAY).n, "month": reads.visitors(db, SITE, *MONTH).n,
            "hour": reads.visitors(db, SITE, T0.replace(minute=0),
                                   T0.replace(minute=0) + dt.timedelta(hours=1)).n,
            "referrers": frame[["value", "hits", "visitors"]].values.tolist()}


def _near(found: list, exact: int) -> bool:
    """One value's visitors within the value sketches' error: lg_k 11, whose estimate of
    a few hundred visitors moves by about 2% with how they were split into partial
    sketches and merged. The whole site's sketches (lg_k 14) are exact at this size:
    they are what catches a lost update."""
    return len(found) == 1 and abs(found[0] - exact) <= 0.05 * exact


def _documents(db) -> dict[str, int]:
    return {coll: db[coll].count_documents({}) for coll in BUCKETS.values()}


def _owners(db, coll: str) -> list[int]:
    return [len(doc.get("owners", {})) for doc in db[coll].find()]


def test_each_rollup_run_compacts_the_buckets_closed_since_the_last(db):
    _two_writers(db)
    before = _counts(db)
    assert before["day"] == 300 and before["referrers"] == [["news.example", 400, 300]]
    assert _documents(db) == {sketches.HOURLY: 2, sketches.DAILY: 2, sketches.MONTHLY: 2}
    dims = db[sketches.VALUES].count_documents({"level": "day"}) // 2  # per writer
    # Two days later: the hour and the day are closed, the month is not (still written).
    run = run_rollups(db, now=dt.datetime(2026, 3, 16, tzinfo=dt.UTC))
    assert run.sketches_merged == 2 + 2 + 2 * dims
    assert _documents(db) == {sketches.HOURLY: 1, sketches.DAILY: 1, sketches.MONTHLY: 2}
    assert _owners(db, HOURLY) == [1] and _owners(db, DAILY) == [1]  # merged owners gone
    assert _counts(db) == before
    # The next run has nothing new to do; the month closes, and is merged, in April.
    assert run_rollups(db, now=dt.datetime(2026, 3, 16, 0, 1, tzinfo=dt.UTC)
                       ).sketches_merged == 0
    run = run_rollups(db, now=dt.datetime(2026, 4, 2, tzinfo=dt.UTC))
    assert run.sketches_merged == 2 + 2 * dims
    assert _documents(db) == {sketches.HOURLY: 1, sketches.DAILY: 1, sketches.MONTHLY: 1}
    assert _counts(db) == before
    assert db[sketches.VALUES].count_documents({}) == 2 * dims


def test_a_writer_saving_during_compaction_keeps_its_update(db, monkeypatch):
    """The writer saves again after the compaction read its documents: they changed, so
    they are not deleted, and its owner stays listed; the next run merges them."""
    _two_writers(db, 200)
    writer = _recorder(db)
    writer.record(SITE, "/", T0, _hit(0))
    writer.flush()
    read = sketches.fetch
    calls = []

    def fetch_then_write(*args, **kwargs):
        docs = read(*args, **kwargs)
        if not calls:       # between the compaction's read and its deletes
            for i in range(200, 250):
                writer.record(SITE, "/", T0, _hit(i))
            writer.flush()
        calls.append(args)
        return docs

    monkeypatch.setattr(sketches, "fetch", fetch_then_write)
    sketches.compact_closed(db, dt.datetime(2026, 3, 16, tzinfo=dt.UTC))
    monkeypatch.undo()
    assert calls
    assert reads.visitors(db, SITE, *DAY).n == 250
    assert _near(reads.breakdown(db, SITE, "referrer", *DAY)["visitors"].tolist(), 250)
    writer.record(SITE, "/", T0, _hit(250))     # the writer goes on: still counted
    writer.close()
    assert reads.visitors(db, SITE, *DAY).n == 251
    sketches.compact_closed(db, dt.datetime(2026, 3, 16, tzinfo=dt.UTC))
    assert db[sketches.DAILY].count_documents({}) == 1
    assert reads.visitors(db, SITE, *DAY).n == 251
    assert _near(reads.breakdown(db, SITE, "referrer", *DAY)["visitors"].tolist(), 251)


def test_compaction_beside_a_concurrent_writer_loses_no_visitor(db):
    _two_writers(db, 200)
    writer = _recorder(db)
    done = threading.Event()

    def write():
        try:
            for i in range(200, 320):
                writer.record(SITE, "/", T0, _hit(i))
                if i % 5 == 0:
                    writer.flush()
            writer.close()
        finally:
            done.set()

    thread = threading.Thread(target=write)
    thread.start()
    passes = 0
    while not done.is_set() or passes == 0:
        sketches.compact_all(db, MONTH[1])
        passes += 1
    thread.join()
    assert reads.visitors(db, SITE, *DAY).n == 320
    sketches.compact_all(db, MONTH[1])
    assert _documents(db) == {sketches.HOURLY: 1, sketches.DAILY: 1, sketches.MONTHLY: 1}
    assert reads.visitors(db, SITE, *DAY).n == 320
    assert reads.visitors(db, SITE, *MONTH).n == 320
    assert _near(reads.breakdown(db, SITE, "referrer", *DAY)["visitors"].tolist(), 320)


@time_machine.travel(MONTH_CLOSED, tick=True)     # every bucket of the data closed
def test_the_server_job_and_the_rollup_command_compact(tmp_path):
    from queries import connect
    from queries.stats import schema

    store = tmp_path / "store"
    db = connect(str(store))
    _two_writers(db)
    before = _counts(db)
    job = RollupJob(db, interval=0, retention=30)
    assert job.run_now().sketches_merged > 0
    assert _documents(db)[sketches.DAILY] == 1 and _counts(db) == before
    _two_writers(db)       # an old day written again (an old log ingested, say)
    before = _counts(db)
    assert job.run_now().sketches_merged == 0      # closed before the last run
    # A day later, the daily sweep of every closed bucket merges them.
    db[schema.CHECKPOINTS].update_one(
        {"_id": sketches.CHECKPOINT_ID},
        {"$set": {"swept": dt.datetime.now(dt.UTC) - sketches.SWEEP_EVERY}})
    db.client.close()
    result = CliRunner().invoke(main, ["rollup", "--store", str(store)])
    assert result.exit_code == 0, result.output
    assert "visitor sketch documents merged" in result.output
    db = connect(str(store))
    try:
        assert _documents(db) == {sketches.HOURLY: 1, sketches.DAILY: 1,
                                  sketches.MONTHLY: 1}
        assert _counts(db) == before
    finally:
        db.client.close()
