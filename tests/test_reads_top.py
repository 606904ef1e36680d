"""queries/reads/top.py: the top pages of a range read from the rollups for the days
they cover rank exactly as the statistics do, and a store whose rollups do not stand
for every hit is answered from the statistics."""

from __future__ import annotations

import datetime as dt

import pytest

import queries
from queries.events.writer import EventWriter
from queries.reads import top
from queries.rollups import reads as rollup_reads
from queries.rollups.build import run_rollups
from queries.stats import catalog

START = dt.datetime(2025, 1, 20, 5, tzinfo=dt.UTC)      # 70 days: February whole inside
PAGES = ("/", "/a", "/b.html", "/c", "/d")
RANGES = [(START, START + dt.timedelta(days=70)),
          (START + dt.timedelta(hours=7, minutes=13), START + dt.timedelta(days=45, minutes=3)),
          (dt.datetime(2025, 2, 1, tzinfo=dt.UTC), dt.datetime(2025, 3, 1, tzinfo=dt.UTC)),
          (START + dt.timedelta(days=3), START + dt.timedelta(days=4, hours=2))]


def _build(db):
    """Hits counted and kept as raw events, rolled up: the pages' shares change over
    time, so a ranking of the wrong days shows."""
    writer = EventWriter(db)
    with queries.HitRecorder(db, flush_interval=3600) as recorder:
        for i in range(3000):
            ts = START + dt.timedelta(minutes=33 * i)
            page = PAGES[(i * i // 7 + i // 600) % len(PAGES)]
            recorder.record("s", page, ts)
            writer.add({"time": ts, "site": "s", "host": "1.2.3.4", "method": "GET",
                        "path": page, "query": "", "status": 200, "bytes": 1,
                        "referrer": None, "user_agent": None})
    writer.flush()
    run_rollups(db, now=START + dt.timedelta(days=400))
    return db


@pytest.fixture(scope="module")
def rolled_up(tmp_path_factory):
    """``_build`` once for the tests that only read it."""
    db = queries.connect(str(tmp_path_factory.mktemp("top") / "store"))
    queries.ensure_indexes(db)
    yield _build(db)
    db.client.close()


@pytest.fixture
def store(embedded_db):
    """``_build`` of a test's own, which it adds to."""
    return _build(embedded_db)


def _spy(monkeypatch) -> list:
    calls = []
    real = rollup_reads.page_totals

    def counted(*args):
        calls.append(args[2:])
        return real(*args)
    monkeypatch.setattr(rollup_reads, "page_totals", counted)
    return calls


@pytest.mark.parametrize(("start", "end"), RANGES)
def test_the_rolled_up_days_rank_as_the_statistics(rolled_up, monkeypatch, start, end):
    calls = _spy(monkeypatch)
    got = top.top_pages(rolled_up, "s", start, end, n=len(PAGES))
    assert got.equals(catalog.top_pages(rolled_up, "s", start, end, n=len(PAGES)))
    assert got["hits"].sum() > 0
    assert bool(calls) == (end - start >= dt.timedelta(days=top.MIN_DAYS)), calls


def test_hits_without_raw_events_send_the_range_to_the_statistics(store, monkeypatch):
    with queries.HitRecorder(store, flush_interval=3600) as recorder:
        recorder.record("s", "/only-counted", START + dt.timedelta(days=10), n=2000)
    start, end = RANGES[0]
    got = top.top_pages(store, "s", start, end, n=2)
    assert got.equals(catalog.top_pages(store, "s", start, end, n=2))
    assert got.index[0] == "/only-counted"


def test_rollups_not_run_yet_leave_it_to_the_statistics(embedded_db, monkeypatch):
    calls = _spy(monkeypatch)
    with queries.HitRecorder(embedded_db, flush_interval=3600) as recorder:
        recorder.record("s", "/a", START, n=3)
    assert top.top_pages(embedded_db, "s", *RANGES[0])["hits"].to_dict() == {"/a": 3}
    assert calls == []
