"""``hitboard serve`` attacked over real sockets: slow clients, huge bodies, malformed
chunked bodies, undecodable bytes and odd asset paths.

One server for the module, with short deadlines (2 s) so that cut-offs come quickly, and
a short flush interval so that counted hits reach the store soon. Every wait is bounded.
"""

from __future__ import annotations

import datetime as dt
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clockkit import server_clock
from dashkit import free_port
from hostilekit import (
    SlowClients,
    children,
    has_proc,
    huge_body,
    p99,
    request,
    rss_kib,
    timed_get,
)

import queries

DEADLINE = 2.0
WAIT = 30.0


class Served:
    def __init__(self, tmp: Path):
        self.port, self.store, self.log = free_port(), tmp / "store", tmp / "serve.log"
        env = {**os.environ, "HITBOARD_STORE": str(self.store), "HITBOARD_ROLLUP_INTERVAL": "0",
               "HITBOARD_FLUSH_INTERVAL": "0.2", "HITBOARD_HEADER_TIMEOUT": str(DEADLINE),
               "HITBOARD_BODY_TIMEOUT": str(DEADLINE),
               "HITBOARD_BEACON_SITES": "slowloris,chunky,s"}
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                [str(Path(sys.executable).parent / "hitboard"), "serve", "--port",
                 str(self.port)], env=env, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + WAIT
        while timed_get(self.port, "/healthz", 2) is None:
            if self.process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"hitboard serve did not start:\n{self.output()[-2000:]}")
            time.sleep(0.2)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def worker(self) -> int:
        (pid,) = children(self.process.pid)
        return pid

    def counted(self, site: str, expected: int) -> int:
        """The site's hits in the store, once ``expected`` are there or ``WAIT`` passed:
        those of the two hours around the server's clock (the hits it stamped)."""
        db = queries.connect(str(self.store))
        now = server_clock(f"http://127.0.0.1:{self.port}/healthz")
        try:
            deadline = time.monotonic() + WAIT
            while True:
                top = queries.top_pages(db, site, now - dt.timedelta(hours=2),
                                        now + dt.timedelta(hours=2))
                total = int(top["hits"].sum()) if len(top) else 0
                if total >= expected or time.monotonic() > deadline:
                    return total
                time.sleep(0.2)
        finally:
            db.client.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    server = Served(tmp_path_factory.mktemp("frontdoor-serve"))
    yield server
    server.process.terminate()
    try:
        server.process.wait(WAIT)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait(WAIT)
    assert "Traceback" not in server.output(), server.output()[-3000:]


@pytest.mark.slow
def test_slow_clients_hold_no_thread_and_every_hit_sent_meanwhile_counts(served):
    hit = "/hit?site=slowloris&page=/during"
    with SlowClients(served.port, heads=150, bodies=150, interval=0.5) as slow:
        time.sleep(1)
        assert slow.connected >= 250
        health, hits = [], []
        until = time.monotonic() + 3 * DEADLINE
        while time.monotonic() < until:
            health.append(timed_get(served.port, "/healthz"))
            hits.append(timed_get(served.port, hit))
    assert None not in health and None not in hits
    assert p99(health) < 1.0 and p99(hits) < 1.0, (p99(health), p99(hits))
    # The deadlines cut them: a slow head closed, a slow body answered 408.
    assert slow.cut >= 150 and slow.statuses[408] >= 100, (slow.cut, slow.statuses)
    assert served.counted("slowloris", len(hits)) == len(hits)


def test_a_stalled_head_is_closed_and_a_stalled_body_gets_a_408(served):
    with socket.create_connection(("127.0.0.1", served.port), timeout=WAIT) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        started = time.monotonic()
        assert sock.recv(100) == b""
        assert DEADLINE * 0.5 < time.monotonic() - started < DEADLINE * 5
    with socket.create_connection(("127.0.0.1", served.port), timeout=WAIT) as sock:
        sock.sendall(b"POST /hit HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        assert sock.recv(100).startswith(b"HTTP/1.1 408 ")


@pytest.mark.skipif(not has_proc(), reason="reads the worker's memory in /proc")
@pytest.mark.parametrize("path", ["/hit", "/_dash-update-component"])
@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_huge_body_is_refused_unread(served, path, chunked):
    worker = served.worker()
    before = rss_kib(worker)
    assert huge_body(served.port, path, 256 * 1024 ** 2, chunked) == 413
    assert rss_kib(worker) - before < 16 * 1024
    assert timed_get(served.port, "/healthz") is not None


@pytest.mark.parametrize("chunks", [
    b"zz\r\nabc\r\n0\r\n\r\n",                    # not a size
    b"3\r\nabcXY0\r\n\r\n",                       # no CRLF after the data
    b"3;\x00\x01\r\nabc\r\n0\r\n\r\n",            # a junk extension
    b"-3\r\nabc\r\n0\r\n\r\n",
    b"3\r\nabc\r\n0\r\nX-Trailer\xff: 1\r\n\r\n",  # an undecodable trailer
])
def test_a_malformed_chunked_body_is_a_400(served, chunks):
    status, _ = request(served.port, b"POST /hit HTTP/1.1\r\nHost: x\r\n"
                        b"Transfer-Encoding: chunked\r\n\r\n" + chunks)
    assert status == 400


def test_a_chunked_beacon_body_counts(served):
    body = b'{"site": "chunky", "page": "/c"}'
    status, _ = request(served.port, b"POST /hit HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                        b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n"
                        % (len(body), body))
    assert status == 204
    assert served.counted("chunky", 1) == 1


@pytest.mark.parametrize("raw, expected", [
    (b"GET /hit?site=\xff&page=/\xfe HTTP/1.1\r\nHost: x\r\n\r\n", {400}),
    (b"GET /\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n", {400}),
    (b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-\xff: 1\r\n\r\n", {400}),
    (b"GET /healthz HTTP/1.1\r\nHost: x\r\nUser-Agent: \xff\xfe\r\n\r\n", {200}),
    (b"GET /hit?site=s&page=/ua HTTP/1.1\r\nHost: x\r\nUser-Agent: \xff\r\n"
     b"Referer: http://\xff\xfe/\r\nOrigin: http://\xff\r\n\r\n", {200, 403}),
    (b"GET /hit?site=s&page=/%00 HTTP/1.1\r\nHost: x\r\n\r\n", {400}),
    (b"GET /%ff HTTP/1.1\r\nHost: x\r\n\r\n", {200, 404}),
])
def test_undecodable_bytes_are_a_client_error_never_a_500(served, raw, expected):
    status, _ = request(served.port, raw)
    assert status in expected


@pytest.mark.parametrize("path", [
    b"/_dash-component-suites/dash/../../../etc/passwd",
    b"/_dash-component-suites/dash/%2e%2e/%2e%2e/etc/passwd",
    b"/_dash-component-suites/dash/x%00.js",
    b"/_dash-component-suites/dash/\x00.js",
    b"/_dash-component-suites/nope/x.js",
    b"/_dash-component-suites/%ff%fe/x.js",
    b"/_dash-component-suites/dash/" + b"%41" * 1300,
    b"/_dash-component-suites/dash/" + b"a" * 5000 + b".js",
    b"/assets/../../etc/passwd",
])
def test_odd_asset_paths_are_a_400_or_404(served, path):
    status, _ = request(served.port, b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status in (400, 404, 414)
