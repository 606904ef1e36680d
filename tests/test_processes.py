"""Worker processes: all started by the thread that makes the pool, dying with it; the
halt points a fault test kills a process at."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
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


HALTING = textwrap.dedent("""
    from queries import processes
    processes.halt_point("step")            # not armed: nothing happens
    processes.halt_at("step", 2)
    for i in range(3):
        processes.halt_point("other")
        processes.halt_point("step")
        print(i, flush=True)
""")


def test_an_armed_process_stops_its_group_at_the_nth_halt_point_of_its_step(tmp_path):
    out = tmp_path / "out"
    with out.open("w") as stdout:
        process = subprocess.Popen([sys.executable, "-c", HALTING], stdout=stdout,
                                   start_new_session=True)
    try:        # it stops, or ends: either way waitid returns
        state = os.waitid(os.P_PID, process.pid, os.WEXITED | os.WSTOPPED | os.WNOWAIT)
        assert state.si_code == os.CLD_STOPPED
        assert out.read_text() == "0\n"     # at the second "step", not the first nor "other"
        os.killpg(process.pid, signal.SIGCONT)
        assert process.wait(timeout=60) == 0
        assert out.read_text() == "0\n1\n2\n"       # once only
    finally:
        process.kill()
        process.wait()
