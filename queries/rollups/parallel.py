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

from concurrent.futures import Executor
from concurrent.futures.process import BrokenProcessPool

from .. import processes
from ..errors import HitboardError
from ..store.connection import bulk_loading, connect
from . import build

# A level of fewer pieces is computed here: starting the processes (~1 s of imports)
# would cost more than sharing the work saves. Processes already running (an ingest's)
# take every level: two levels may then run side by side (``build.roll_hours``).
MIN_PARTS = 16
_db = None


def _roll(store: str, database: str | None, level: str, part: dict) -> tuple[int, int]:
    """``build.roll_part`` in a worker, through its own connection, made on first use."""
    global _db
    if _db is None:
        _db = connect(store, database)
        bulk_loading(_db)
    return build.roll_part(_db, level, part)


class RollupWorkers:
    """``jobs`` processes rolling up ``store`` (``database``): those of ``executor`` if
    given (an ingest's, left running for its caller to stop), else started on first
    need; ``db`` computes the small levels here. Close it (or use it in ``with``)."""

    def __init__(self, db, store: str, database: str | None, jobs: int,
                 executor: Executor | None = None):
        self.db, self.store, self.database, self.jobs = db, store, database, jobs
        self._borrowed = executor
        self._pool: Executor | None = executor

    def start(self, level: str, parts: list[dict]):
        """``build.roll_part`` of each piece, begun: the pieces handed to the processes
        (or computed here), and a function that returns their results, (documents
        written, buckets) per piece, once they are all done."""
        least = 1 if self._borrowed is not None else MIN_PARTS
        if self.jobs < 2 or len(parts) < least:
            results = [build.roll_part(self.db, level, part) for part in parts]
            return lambda: results
        if self._pool is None:
            self._pool = processes.pool(self.jobs)
        try:
            futures = [self._pool.submit(_roll, self.store, self.database, level, part)
                       for part in parts]
        except BrokenProcessPool:
            raise _died() from None

        def results() -> list[tuple[int, int]]:
            try:
                return [future.result() for future in futures]
            except BrokenProcessPool:
                raise _died() from None
        return results

    def close(self) -> None:
        if self._pool is not None and self._pool is not self._borrowed:
            self._pool.shutdown(wait=True, cancel_futures=True)
        self._pool = None

    def __enter__(self) -> RollupWorkers:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _died() -> HitboardError:
    return HitboardError("a rollup worker process died (killed, or out of memory?): the "
                         "run is incomplete, run it again")
