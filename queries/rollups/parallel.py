"""What a rollup run does with the worker processes an ingest lends it: nothing.

A run used to share its pieces (``build.CHUNK`` parent buckets each) out to the ingest's
processes, each computing and writing its pieces in Python. With the hourly level and the
merges above it in Polars (``hourly``, ``merged``), one process does the same run in less
CPU (shifted 500,000 lines: 6.0 CPU s against 8.5 shared, long tail 200,000: 8.6 against
11.6; ``bench/rollup_phase.py``) and without a second process's ~90-240 MB. And Polars'
thread pool does not survive a fork: a process forked after its parent ran Polars (a
test's ingest after another, in one interpreter) hangs at its first Polars call, and
``processes.can_fork`` cannot see those threads. So every piece is computed here.
:class:`RollupWorkers` stays as the ingest's handle on the run.
"""

from __future__ import annotations

from concurrent.futures import Executor

from . import build


class RollupWorkers:
    """An ingest's rollups: ``build.roll_part`` of each piece computed through ``db``
    (``executor``, the ingest's processes, is left to its owner)."""

    sharing = False

    def __init__(self, db, store: str, database: str | None, jobs: int,
                 executor: Executor | None = None):
        self.db, self.store, self.database, self.jobs = db, store, database, jobs

    def start(self, level: str, parts: list[dict]):
        """``build.roll_part`` of each piece, done: a function returning their results,
        (documents written, buckets) per piece."""
        results = [build.roll_part(self.db, level, part) for part in parts]
        return lambda: results

    def close(self) -> None:
        """Nothing to stop: no process of its own."""

    def __enter__(self) -> RollupWorkers:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
