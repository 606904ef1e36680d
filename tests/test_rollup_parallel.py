"""An ingest's rollups are computed in its own process, whatever processes it lends:
the documents one process writes, and no piece sent to a forked process (Polars' thread
pool does not survive a fork)."""

from __future__ import annotations

import datetime as dt

import queries
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


class _Refusing:
    """A lent executor that fails any piece handed to it."""

    def submit(self, *args, **kwargs):
        raise AssertionError("a rollup piece was sent to a worker process")


def test_a_lent_pool_is_left_alone_and_the_documents_are_one_process_s(tmp_path):
    _, alone = _store(tmp_path, "alone")
    path, lent = _store(tmp_path, "lent")
    run_rollups(alone)
    with parallel.RollupWorkers(lent, path, lent.name, 2, _Refusing()) as workers:
        assert not workers.sharing
        run = start_rollups(lent, workers=workers)
        finish_rollups(lent, run, workers=workers)
    assert run.documents["hourly"] > 0
    assert _rollups(lent) == _rollups(alone)
