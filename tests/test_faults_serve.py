"""SIGTERM and SIGKILL to ``hitboard serve``: every hit (and raw event) the /hit beacon
acknowledged is in the store, once the server has exited (SIGTERM) or once it has been
started again (SIGKILL of the master and its workers: the journal is counted then).

The SIGTERM test's server runs with a one-hour flush interval, so nothing but the
shutdown can write them. Every wait is bounded: a server that does not stop fails the
test, not CI.
"""

from __future__ import annotations

import datetime as dt
import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import pytest
from clockkit import server_clock
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
        began = server_clock(base + "/healthz")     # its clock, not this process's
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
        journal = json.loads(get(base + "/healthz"))["journal"]
        assert journal["backlog_bytes"] > 0 and journal["hits_written"] == 0

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
        top = queries.top_pages(db, "term", began - dt.timedelta(hours=1),
                                began + dt.timedelta(hours=1))["hits"].to_dict()
        assert top == sent, output[-2000:]
        total = sum(d["monthly"] for d in db[schema.MONTHLY].find(
            {"metadata.site": "term", "metadata.page": "*"}))
        assert total == 30
        # The beacon's raw events are buffered too, and flushed at the same shutdown.
        assert stored_count(db, "term") == 30
    finally:
        db.client.close()


def start(store: Path, port: int, log, *extra: str, **settings: str) -> subprocess.Popen:
    """``hitboard serve`` on ``store``, in a process group of its own (master and
    workers killed together)."""
    env = {**os.environ, "HITBOARD_STORE": str(store), "HITBOARD_ROLLUP_INTERVAL": "0",
           "HITBOARD_BEACON_SITES": "kill",
           **{f"HITBOARD_{name.upper()}": value for name, value in settings.items()}}
    return subprocess.Popen(
        [str(Path(sys.executable).parent / "hitboard"), "serve", "--port", str(port),
         *extra], env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def send_until(base: str, acknowledged: Counter, attempted: Counter, stop) -> None:
    """Send hits on one keep-alive connection until ``stop`` is set or the server goes;
    each page's hits attempted and acknowledged (2xx) are counted."""
    host, port = base.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    i = 0
    while not stop.is_set():
        page = PAGES[i % len(PAGES)]
        i += 1
        attempted[page] += 1
        try:
            connection.request("POST", "/hit", json.dumps({"site": "kill", "page": page}),
                               {"Content-Type": "text/plain", "User-Agent": "Mozilla/5.0"})
            response = connection.getresponse()
            response.read()
        except (OSError, http.client.HTTPException):
            return
        status = response.status
        if 200 <= status < 300:
            acknowledged[page] += 1


@pytest.mark.slow
def test_sigkill_of_every_process_loses_no_acknowledged_hit(tmp_path):
    """Hits flow from 4 connections into two workers; the master and the workers are
    SIGKILLed once 1,500 are acknowledged. Started again, the server counts every hit it
    acknowledged, and none twice: at most the few in flight at the kill come on top."""
    store, port = tmp_path / "store", free_port()
    base = f"http://127.0.0.1:{port}"
    log = (tmp_path / "serve.log").open("wb")
    senders, stop = 4, threading.Event()
    acknowledged = [Counter() for _ in range(senders)]
    attempted = [Counter() for _ in range(senders)]
    server = start(store, port, log, "--workers", "2")
    try:
        wait_until_serving(server, base)
        began = server_clock(base + "/healthz")     # its clock, not this process's
        threads = [threading.Thread(target=send_until, args=(base, acknowledged[i],
                                                             attempted[i], stop))
                   for i in range(senders)]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + WAIT
        while sum(sum(c.values()) for c in acknowledged) < 1500:
            assert time.monotonic() < deadline and server.poll() is None
            time.sleep(0.01)
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(WAIT)
        stop.set()
        for thread in threads:
            thread.join(WAIT)
        server = start(store, port, log)
        wait_until_serving(server, base)
        deadline = time.monotonic() + WAIT
        while json.loads(get(base + "/healthz"))["journal"]["backlog_bytes"]:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=WAIT) == 0
    finally:
        stop.set()
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(WAIT)
        log.close()

    acked, sent = sum(acknowledged, Counter()), sum(attempted, Counter())
    db = queries.connect(str(store))
    try:
        top = queries.top_pages(db, "kill", began - dt.timedelta(hours=1),
                                began + dt.timedelta(hours=1))["hits"].to_dict()
        output = (tmp_path / "serve.log").read_text(errors="replace")[-2000:]
        for page in PAGES:
            assert acked[page] <= top[page] <= sent[page], (page, acked, top, sent, output)
        total = sum(d["monthly"] for d in db[schema.MONTHLY].find(
            {"metadata.site": "kill", "metadata.page": "*"}))
        assert total == sum(top.values())
        assert stored_count(db, "kill") == total
        assert total - sum(acked.values()) <= senders          # only those in flight
    finally:
        db.client.close()
