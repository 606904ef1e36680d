"""Rollups computed by worker processes, for the runs that rewrite a great many buckets.

An ingest of a log spanning months rewrites hundreds of thousands of buckets (about one
hourly bucket per page and hour with traffic), most of the cost in Python: building and
encoding each document. A level's pieces (``build.CHUNK`` parent buckets each) are
independent, so workers (``queries.processes``) compute and write them side by side,
one level after the other; only SQLite's inserts wait for each other. A run is as safe
as in one process: its checkpoint moves only once every level is written, and a worker
that fails fails the run, which the next one repeats.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from .. import processes
from ..errors import HitboardError
from ..store.connection import bulk_loading, connect
from . import build

# A level of fewer pieces is computed here: starting the processes (~1 s of imports)
# would cost more than sharing the work saves.
MIN_PARTS = 16
_db = None


def _connect(store: str, database: str | None) -> None:
    global _db
    _db = connect(store, database)
    bulk_loading(_db)


def _roll(level: str, part: dict) -> tuple[int, int]:
    return build.roll_part(_db, level, part)


class RollupWorkers:
    """``jobs`` processes rolling up ``store`` (``database``), started on first need;
    ``db`` computes the small levels here. Close it (or use it in ``with``)."""

    def __init__(self, db, store: str, database: str | None, jobs: int):
        self.db, self.store, self.database, self.jobs = db, store, database, jobs
        self._pool: ProcessPoolExecutor | None = None

    def map(self, level: str, parts: list[dict]) -> list[tuple[int, int]]:
        """``build.roll_part`` of each piece: (documents written, buckets) per piece."""
        if self.jobs < 2 or len(parts) < MIN_PARTS:
            return [build.roll_part(self.db, level, part) for part in parts]
        if self._pool is None:
            self._pool = processes.pool(self.jobs, _connect, self.store, self.database)
        try:
            return list(self._pool.map(_roll, [level] * len(parts), parts))
        except BrokenProcessPool:
            raise HitboardError("a rollup worker process died (killed, or out of memory?): "
                                "the run is incomplete, run it again") from None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def __enter__(self) -> RollupWorkers:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
