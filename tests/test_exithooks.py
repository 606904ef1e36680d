"""queries.counting.exithooks: a recorder's pending hits are written when its process exits
receives SIGTERM (gunicorn's stop signal)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import queries
from queries.stats import schema

RECORD_SCRIPT = """
import datetime as dt, faulthandler, signal, sys, time
import queries
faulthandler.register(signal.SIGUSR1)
db = queries.connect(sys.argv[1])
recorder = queries.HitRecorder(db, flush_interval=3600)
ts = dt.datetime(2026, 11, 21, 10, 5, tzinfo=dt.UTC)
for _ in range(7):
    recorder.record("s1", "/a", ts)
print("ready", flush=True)
if sys.argv[2] == "wait":
    time.sleep(60)
"""


@pytest.mark.parametrize("ending", ["exit", "sigterm"])
def test_pending_hits_are_flushed_on_exit_and_sigterm(tmp_path, ending):
    store = str(tmp_path / "store")
    process = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(RECORD_SCRIPT), store,
         "wait" if ending == "sigterm" else "exit"],
        stdout=subprocess.PIPE, stderr=(tmp_path / "stderr").open("w"), text=True,
        env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert process.stdout.readline().strip() == "ready"
    if ending == "sigterm":
        process.send_signal(signal.SIGTERM)
    assert _exit_status(process, tmp_path / "stderr") == (143 if ending == "sigterm" else 0)
    db = queries.connect(store, read_only=True)
    try:
        assert db[schema.DAILY].find_one({"_id": "20261121/s1/a"})["daily"] == 7
    finally:
        db.client.close()


def _exit_status(process: subprocess.Popen, stderr, timeout: float = 60) -> int:
    """The process's exit status; if it hangs, fail with every thread's stack."""
    try:
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGUSR1)
        time.sleep(2)
        process.kill()
        process.wait()
        pytest.fail(f"no exit within {timeout} s; its threads:\n{stderr.read_text()}")
