"""Rollups shared out to worker processes write what one process writes."""

from __future__ import annotations

import datetime as dt
import os
import signal
import time

import pytest
from dash.testing.wait import until

import queries
from queries import processes
from queries.errors import HitboardError
from queries.events.writer import EventWriter
from queries.rollups import parallel
from queries.rollups.build import finish_rollups, run_rollups, start_rollups
from queries.stats import schema

START = dt.datetime(2025, 1, 27, tzinfo=dt.UTC)


def _events(db, n: int) -> None:
    writer = EventWriter(db)
    for i in range(n):        # an event every 1.2 h: 900 of them span 45 days
        writer.add({"time": START + dt.timedelta(hours=i * 1.2), "site": "s",
                    "host": "1.2.3.4", "method": "GET", "path": f"/{i % 4}", "query": "",
                    "status": (200, 404, 500)[i % 3], "bytes": i, "referrer": None,
                    "user_agent": None})
    writer.flush()


def _rollups(db) -> dict:
    return {level: sorted(({k: v for k, v in doc.items() if k != "computed"}
                           for doc in db[name].find()), key=lambda d: d["_id"])
            for level, name in schema.ROLLUPS.items()}


def _store(tmp_path, name, events=900):
    path = str(tmp_path / name)
    db = queries.connect(path)
    queries.ensure_indexes(db)
    _events(db, events)
    return path, db


def test_workers_write_what_one_process_writes(tmp_path):
    """Pieces of a day (hours) or two (days) shared out give the documents that the
    larger pieces of one process give."""
    _, alone = _store(tmp_path, "alone")
    path, shared = _store(tmp_path, "shared")
    run_rollups(alone)
    lent = processes.pool(2)
    try:
        with parallel.RollupWorkers(shared, path, shared.name, 2, lent) as workers:
            assert workers.sharing
            run = run_rollups(shared, workers=workers)
    finally:
        lent.shutdown()
    assert run.documents["hourly"] > 0
    assert _rollups(shared) == _rollups(alone)


def test_processes_already_running_take_every_level(tmp_path):
    """An ingest lends its worker processes: they roll up even a short log, and stay."""
    _, alone = _store(tmp_path, "alone", events=100)
    path, shared = _store(tmp_path, "shared", events=100)
    run_rollups(alone)
    lent = processes.pool(2)
    try:
        with parallel.RollupWorkers(shared, path, shared.name, 2, lent) as workers:
            run_rollups(shared, workers=workers)
        assert lent.submit(os.getpid).result() != os.getpid()      # still running
        # One probe per process (each holds its process a moment, so the other probe
        # goes to the other one): a short run may have used only one of them.
        assert any(lent.map(_connected, [0.5, 0.5])), "the workers rolled up"
    finally:
        lent.shutdown()
    assert _rollups(shared) == _rollups(alone)


def test_a_started_run_rolls_the_hours_up_while_its_caller_works(tmp_path):
    """An ingest starts its run before its last flush: the hourly level is written by
    the workers meanwhile, the levels above it once the run is finished."""
    _, alone = _store(tmp_path, "alone", events=100)
    path, shared = _store(tmp_path, "shared", events=100)
    run_rollups(alone)
    hourly, daily = (shared[schema.ROLLUPS[level]] for level in ("hourly", "daily"))
    lent = processes.pool(2)
    try:
        with parallel.RollupWorkers(shared, path, shared.name, 2, lent) as workers:
            run = start_rollups(shared, workers=workers)
            until(lambda: hourly.count_documents({}) == alone[hourly.name].count_documents({}),
                  timeout=30)
            assert daily.count_documents({}) == 0
            finish_rollups(shared, run, workers=workers)
    finally:
        lent.shutdown()
    assert _rollups(shared) == _rollups(alone)


def _connected(pause: float) -> bool:
    time.sleep(pause)
    return parallel._db is not None


def test_without_lent_processes_a_run_starts_none(tmp_path, monkeypatch):
    path, db = _store(tmp_path, "store")
    monkeypatch.setattr(processes, "pool", None)         # calling it would fail the run
    with parallel.RollupWorkers(db, path, db.name, jobs=2) as workers:
        assert not workers.sharing
        run_rollups(db, workers=workers)
    assert db[schema.ROLLUPS["yearly"]].count_documents({}) > 0


def test_a_dead_worker_fails_the_run_clearly(tmp_path):
    path, db = _store(tmp_path, "store")
    lent = processes.pool(2)
    try:
        with parallel.RollupWorkers(db, path, db.name, 2, lent) as workers:
            assert workers.start("hourly", [])() == []
            parts = [{"s": {START + dt.timedelta(hours=h)}} for h in range(4)]
            assert len(workers.start("hourly", parts)()) == 4
            for pid in list(lent._processes):
                os.kill(pid, signal.SIGKILL)
            with pytest.raises(HitboardError, match="rollup worker process died"):
                workers.start("hourly", parts)()
    finally:
        lent.shutdown()
