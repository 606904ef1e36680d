"""SIGTERM to ``hitboard serve``: the hits (and raw events) the /hit beacon accepted but
had not flushed yet are in the store once the server has exited.

The server runs with a one-hour flush interval, so nothing but the shutdown can write
them. Every wait is bounded: a server that does not stop fails the test, not CI.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from dashkit import free_port
from fakes import stored_count

import queries
from queries.stats import schema

WAIT = 30.0
PAGES = ("/", "/pricing", "/docs/a.b")


def get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=WAIT) as response:
        return response.read()


def post(url: str, body: dict) -> int:
    request = urllib.request.Request(url, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "text/plain;charset=UTF-8"})
    with urllib.request.urlopen(request, timeout=WAIT) as response:
        return response.status


def wait_until_serving(server: subprocess.Popen, base: str) -> dict:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"hitboard serve exited with {server.returncode}")
        try:
            return json.loads(get(base + "/healthz"))
        except (OSError, urllib.error.URLError):
            time.sleep(0.1)
    pytest.fail(f"hitboard serve did not answer within {WAIT:.0f}s")


def listening_addresses(port: int) -> set[str]:
    """The local addresses with a socket listening on ``port`` (Linux /proc/net/tcp)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:         # 0A: LISTEN
                found.add(address)
    return found


@pytest.mark.slow
def test_sigterm_flushes_the_hits_the_beacon_accepted(tmp_path):
    store, port = tmp_path / "store", free_port()
    env = {**os.environ, "HITBOARD_STORE": str(store), "HITBOARD_FLUSH_INTERVAL": "3600",
           "HITBOARD_ROLLUP_INTERVAL": "0", "HITBOARD_BEACON_SITES": "term"}
    env.pop("HITBOARD_HOST", None)
    log = (tmp_path / "serve.log").open("wb")
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "hitboard"), "serve", "--port", str(port),
         "--threads", "2"], env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(server, base)
        if os.path.exists("/proc/net/tcp"):       # the default binds loopback only
            assert listening_addresses(port) == {"0100007F"}
        sent = {page: 0 for page in PAGES}
        for i in range(30):
            page = PAGES[i % len(PAGES)]
            if i % 2:
                assert post(base + "/hit", {"site": "term", "page": page}) == 204
            else:
                assert get(f"{base}/hit?site=term&page={page}").startswith(b"GIF89a")
            sent[page] += 1
        recorder = json.loads(get(base + "/healthz"))["recorder"]
        assert recorder["pending_hits"] == 30 and recorder["hits_written"] == 0

        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=WAIT) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(WAIT)
        log.close()

    output = (tmp_path / "serve.log").read_text(errors="replace")
    db = queries.connect(str(store))
    try:
        now = dt.datetime.now(dt.UTC)
        top = queries.top_pages(db, "term", now - dt.timedelta(hours=1),
                                now + dt.timedelta(hours=1))["hits"].to_dict()
        assert top == sent, output[-2000:]
        total = sum(d["monthly"] for d in db[schema.MONTHLY].find(
            {"metadata.site": "term", "metadata.page": "*"}))
        assert total == 30
        # The beacon's raw events are buffered too, and flushed at the same shutdown.
        assert stored_count(db, "term") == 30
    finally:
        db.client.close()
