"""Worker processes: all started by the thread that makes the pool, dying with it."""

from __future__ import annotations

import os
import threading

from queries import processes


def test_every_worker_starts_with_the_pool_and_outlives_a_thread_that_submits():
    """A worker's death signal fires when the *thread* that started it ends: a pool
    starting its workers on demand would lose those a short-lived thread started."""
    pool = processes.pool(2)
    try:
        assert len(pool._processes) == 2           # both running before any real task
        pids = []
        thread = threading.Thread(target=lambda: pids.extend(
            f.result() for f in [pool.submit(os.getpid) for _ in range(4)]))
        thread.start()
        thread.join()
        assert set(pids) <= set(pool._processes) and os.getpid() not in pids
        assert pool.submit(os.getpid).result() in pool._processes   # still alive
    finally:
        pool.shutdown()
