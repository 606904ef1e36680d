"""Rollups computed by worker processes an ingest lends, for the runs that rewrite a
great many buckets.

An ingest of a log spanning months rewrites hundreds of thousands of buckets (about one
hourly bucket per page and hour with traffic). A level's pieces (``build.CHUNK`` parent
buckets each) are independent, so the ingest's worker processes (``queries.processes``),
if it has them, compute and write them side by side, one level after the other; only
SQLite's inserts wait for each other. Without lent processes a run is computed in its own
process: the hourly level and the merges are column work (Polars), and starting
processes for it would cost more memory (~90 MB each) and imports than they save. A run
is as safe as in one process: its checkpoint moves only once every level is written, and
a worker that fails fails the run, which the next one repeats.
"""

from __future__ import annotations

from concurrent.futures import Executor
from concurrent.futures.process import BrokenProcessPool

from ..errors import HitboardError
from ..store.connection import bulk_loading, connect
from . import build

_db = None


def _roll(store: str, database: str | None, level: str, part: dict) -> tuple[int, int]:
    """``build.roll_part`` in a worker, through its own connection, made on first use."""
    global _db
    if _db is None:
        _db = connect(store, database)
        bulk_loading(_db)
    return build.roll_part(_db, level, part)


class RollupWorkers:
    """The processes of ``executor`` (an ingest's, left running for its caller to stop)
    rolling up ``store`` (``database``) when ``jobs`` > 1; else every piece is computed
    here through ``db``. Close it (or use it in ``with``)."""

    def __init__(self, db, store: str, database: str | None, jobs: int,
                 executor: Executor | None = None):
        self.db, self.store, self.database, self.jobs = db, store, database, jobs
        self._pool: Executor | None = executor

    @property
    def sharing(self) -> bool:
        """Whether pieces go to processes (else ``build`` computes them here)."""
        return self._pool is not None and self.jobs > 1

    def start(self, level: str, parts: list[dict]):
        """``build.roll_part`` of each piece, begun: the pieces handed to the processes
        (or computed here), and a function that returns their results, (documents
        written, buckets) per piece, once they are all done."""
        if not self.sharing:
            results = [build.roll_part(self.db, level, part) for part in parts]
            return lambda: results
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
        """Forget the lent processes (their owner stops them)."""
        self._pool = None

    def __enter__(self) -> RollupWorkers:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _died() -> HitboardError:
    return HitboardError("a rollup worker process died (killed, or out of memory?): the "
                         "run is incomplete, run it again")
