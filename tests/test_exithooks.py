"""queries.stats.exithooks: a recorder's pending hits are written when its process exits or
receives SIGTERM (gunicorn's stop signal)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

import queries
from queries.stats import schema

RECORD_SCRIPT = """
import datetime as dt, sys, time
import queries
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
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert process.stdout.readline().strip() == "ready"
    if ending == "sigterm":
        process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == (143 if ending == "sigterm" else 0)
    db = queries.connect(store, read_only=True)
    try:
        assert db[schema.DAILY].find_one({"_id": "20261121/s1/a"})["daily"] == 7
    finally:
        db.client.close()
