"""Several processes on one embedded store at once, as users run them: `hitboard serve
--workers 2` taking beacon hits, `hitboard ingest --follow` tailing a growing log and
`hitboard rollup --every 1`. Afterwards every hit is counted exactly once."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

import queries
from queries.rollups.build import run_rollups
from queries.stats import schema

LOG = Path(__file__).resolve().parents[2] / "shared" / "data" / "apache_combined_2015.log"
HITBOARD = str(Path(sys.executable).parent / "hitboard")
BEACON_HITS = 200


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait(predicate, what: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def _total(store: str, site: str) -> int:
    db = queries.connect(store, read_only=True)
    try:
        doc = db[schema.MONTHLY].find_one({"metadata.site": site, "metadata.page": "*"})
        return doc["monthly"] if doc else 0
    finally:
        db.client.close()


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
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
    store, port = str(tmp_path / "store"), _free_port()
    env = {**os.environ, "HITBOARD_STORE": store, "HITBOARD_ROLLUP_INTERVAL": "1"}
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
        _wait(lambda: _get(f"http://127.0.0.1:{port}/healthz") == 200, "the server")
        for i in range(BEACON_HITS):
            assert _get(f"http://127.0.0.1:{port}/hit?site=beacon&page=/p{i % 5}") == 200
        with log.open("ab") as handle:  # the log grows while everyone writes
            handle.write(second)
        _wait(lambda: _total(store, "logs") == 6000, "ingest --follow to count 6,000 lines")
        _wait(lambda: _total(store, "beacon") == BEACON_HITS, "the beacon hits")
        page = urllib.request.urlopen(f"http://127.0.0.1:{port}/?site=logs", timeout=10)
        assert page.status == 200
    finally:
        for proc in procs.values():
            proc.send_signal(signal.SIGTERM)
        errors = {name: proc.communicate(timeout=60)[1] for name, proc in procs.items()}
    for name, proc in procs.items():
        assert proc.returncode in (0, -signal.SIGTERM, 128 + signal.SIGTERM), (
            name, errors[name][-2000:])
        assert "Traceback" not in errors[name], (name, errors[name][-2000:])
    assert _total(store, "logs") == 6000 and _total(store, "beacon") == BEACON_HITS
    db = queries.connect(store)
    try:
        assert db[schema.EVENTS].count_documents({"site": "logs"}) == 6000
        run_rollups(db)  # whatever the last tick of `hitboard rollup` had not read
        for site, total in (("logs", 6000), ("beacon", BEACON_HITS)):
            hours = db[schema.ROLLUPS["hourly"]].find({"site": site, "page": "*"})
            assert sum(doc["hits"] for doc in hours) == total, site
    finally:
        db.client.close()
