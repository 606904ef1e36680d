"""Several processes on one embedded store at once, as users run them: `hitboard serve
--workers 2` taking beacon hits, `hitboard ingest --follow` tailing a growing log and
`hitboard rollup --every 1`. Afterwards every hit is counted exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from dashkit import free_port
from fakes import stored_count

import queries
from queries.rollups.build import run_rollups
from queries.stats import schema

LOG = Path(__file__).resolve().parents[2] / "shared" / "data" / "apache_combined_2015.log"
HITBOARD = str(Path(sys.executable).parent / "hitboard")
BEACON_HITS = 200
# Ceilings only: every wait ends as soon as its condition holds. Five processes share
# the machine here (gunicorn and its 2 workers, ingest, rollup) with whatever else runs:
# at a load average of 8 one step took over 90 s.
WAIT = 600.0
REQUEST_TIMEOUT = 120.0


def _wait(predicate, what: str, timeout: float = WAIT, procs: dict | None = None) -> None:
    """Poll ``predicate`` until it holds; fail at once if one of ``procs`` has exited
    (it never will do what is awaited), else after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return
        for name, proc in (procs or {}).items():
            if proc.poll() is not None:
                raise AssertionError(f"`hitboard {name}` exited ({proc.returncode}) "
                                     f"while waiting for {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.3)


def _total(store: str, site: str) -> int:
    db = queries.connect(store, read_only=True)
    try:
        doc = db[schema.MONTHLY].find_one({"metadata.site": site, "metadata.page": "*"})
        return doc["monthly"] if doc else 0
    finally:
        db.client.close()


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=REQUEST_TIMEOUT) as response:
            return response.status
    except OSError:
        return 0


@pytest.mark.slow
def test_serve_ingest_and_rollup_share_one_store(tmp_path):
    if not LOG.exists():
        pytest.skip(f"{LOG} is not here")
    lines = LOG.read_bytes().splitlines(keepends=True)
    first, second = b"".join(lines[:3000]), b"".join(lines[3000:6000])
    log = tmp_path / "access.log"
    log.write_bytes(first)
    store, port = str(tmp_path / "store"), free_port()
    env = {**os.environ, "HITBOARD_STORE": store, "HITBOARD_ROLLUP_INTERVAL": "1",
           "HITBOARD_BEACON_SITES": "beacon"}
    procs = {
        "serve": subprocess.Popen([HITBOARD, "serve", "--workers", "2", "--port", str(port)],
                                  env=env, stderr=subprocess.PIPE, text=True),
        "ingest": subprocess.Popen([HITBOARD, "ingest", str(log), "--site", "logs",
                                    "--follow"], env=env, stderr=subprocess.PIPE, text=True),
        "rollup": subprocess.Popen([HITBOARD, "rollup", "--every", "1"], env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   text=True),
    }
    try:
        _wait(lambda: _get(f"http://127.0.0.1:{port}/healthz") == 200, "the server",
              procs=procs)
        for i in range(BEACON_HITS):
            assert _get(f"http://127.0.0.1:{port}/hit?site=beacon&page=/p{i % 5}") == 200
        with log.open("ab") as handle:  # the log grows while everyone writes
            handle.write(second)
        _wait(lambda: _total(store, "logs") == 6000, "ingest --follow to count 6,000 lines",
              procs=procs)
        _wait(lambda: _total(store, "beacon") == BEACON_HITS, "the beacon hits", procs=procs)
        again = subprocess.run([HITBOARD, "ingest", str(log), "--site", "logs"], env=env,
                               capture_output=True, text=True, timeout=WAIT)
        assert again.returncode == 1 and "is reading" in again.stderr, again.stderr[-2000:]
        assert "Traceback" not in again.stderr and "resume" not in again.stderr
        assert again.stdout == ""                       # no summary of nothing read
        page = urllib.request.urlopen(f"http://127.0.0.1:{port}/?site=logs",
                                      timeout=REQUEST_TIMEOUT)
        assert page.status == 200
        # A large log (over 16 MiB) batch-ingested by worker processes beside them all.
        big = tmp_path / "big.log"
        big.write_bytes(b"".join(lines) * 8)
        batch = subprocess.run([HITBOARD, "ingest", str(big), "--site", "big", "--jobs", "2"],
                               env=env, capture_output=True, text=True, timeout=WAIT)
        assert batch.returncode == 0, batch.stderr[-2000:]
        assert _total(store, "big") == 8 * len(lines)
        assert _get(f"http://127.0.0.1:{port}/healthz") == 200
    finally:
        for proc in procs.values():
            proc.send_signal(signal.SIGTERM)
        errors = {name: proc.communicate(timeout=WAIT)[1] for name, proc in procs.items()}
    for name, proc in procs.items():
        assert proc.returncode in (0, -signal.SIGTERM, 128 + signal.SIGTERM), (
            name, errors[name][-2000:])
        assert "Traceback" not in errors[name], (name, errors[name][-2000:])
    assert _total(store, "logs") == 6000 and _total(store, "beacon") == BEACON_HITS
    db = queries.connect(store)
    try:
        assert stored_count(db, "logs") == 6000
        run_rollups(db)  # whatever the last tick of `hitboard rollup` had not read
        for site, total in (("logs", 6000), ("beacon", BEACON_HITS)):
            hours = db[schema.ROLLUPS["hourly"]].find({"site": site, "part": 0})
            assert sum(doc["hits"] for doc in hours) == total, site
    finally:
        db.client.close()
