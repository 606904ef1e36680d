"""A room full of viewers while traffic pours in: live-page polling plus /hit beacons.

Starts ``hitboard serve`` (gunicorn, one gthread worker) on a free loopback port with a
temporary embedded store seeded with a little history, then for ``--duration`` seconds:

- ``--viewers`` simulated browsers (default 100), each posting the live page's two
  server-side callbacks (the chart/KPI refresh and the recent-hits feed) every 2 s, the
  bodies the browser sends, over one keep-alive connection per viewer;
- ``--rate`` hits/s (default 1,000) through ``/hit``, from ``--beacon-threads`` paced
  threads, alternating ``GET /hit?site=&page=`` and ``POST /hit`` JSON beacons.

Then SIGTERMs the server (which flushes what its recorder holds), reads the counts back
through ``queries`` and prints p50/p95/p99 latency per kind, errors, hits sent vs hits
counted, and CPU used by the server and by this load generator. Exits 1 when any request
failed or the counts differ.

    .venv/bin/python bench/viewers.py                  # 100 viewers + 1,000 hits/s, 60 s
    .venv/bin/python bench/viewers.py --duration 10 --viewers 20 --rate 200
"""

from __future__ import annotations

import argparse
import datetime as dt
import http.client
import importlib.util
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import defaultdict
from pathlib import Path

import queries

HERE = Path(__file__).resolve().parent
REFRESH_S = 2.0
RECENT_OUTPUT = "live-recent.children"


def _bench_dashboard():
    """bench/dashboard.py's seeding and request bodies (bench/ is not a package, and its
    module name would shadow the ``dashboard`` package)."""
    spec = importlib.util.spec_from_file_location("bench_dashboard", HERE / "dashboard.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _bench_dashboard()


class Latencies:
    """Latencies and errors per request kind, shared by every thread."""

    def __init__(self):
        self._lock = threading.Lock()
        self.ok: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, list[str]] = defaultdict(list)

    def add(self, kind: str, seconds: float | None, error: str | None = None) -> None:
        with self._lock:
            if error is None:
                self.ok[kind].append(seconds)
            else:
                self.errors[kind].append(error)


def recent_request(search: str, n: int) -> bytes:
    """The body the browser posts for the live page's recent-hits feed."""
    return json.dumps({
        "output": RECENT_OUTPUT,
        "outputs": {"id": "live-recent", "property": "children"},
        "inputs": [{"id": "live-interval", "property": "n_intervals", "value": n},
                   {"id": "live-recent-n", "property": "value", "value": "20"},
                   {"id": "url", "property": "search", "value": search}],
        "changedPropIds": ["live-interval.n_intervals"],
        "state": [],
    }).encode()


class Connection:
    """One keep-alive HTTP connection that reconnects after an error."""

    def __init__(self, port: int):
        self.port = port
        self._conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def send(self, method: str, path: str, body: bytes | None, headers: dict) -> tuple[int, bytes]:
        try:
            self._conn.request(method, path, body, headers)
            response = self._conn.getresponse()
            return response.status, response.read()
        except (OSError, http.client.HTTPException):
            self._conn.close()
            self._conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            raise

    def close(self) -> None:
        self._conn.close()


def timed(stats: Latencies, kind: str, conn: Connection, method: str, path: str,
          body: bytes | None, headers: dict, ok) -> bool:
    """Send one request; record its latency, or the error. True when it succeeded."""
    started = time.perf_counter()
    try:
        status, data = conn.send(method, path, body, headers)
    except (OSError, http.client.HTTPException) as exc:
        stats.add(kind, None, type(exc).__name__)
        return False
    elapsed = time.perf_counter() - started
    if not ok(status, data):
        stats.add(kind, None, f"HTTP {status}")
        return False
    stats.add(kind, elapsed)
    return True


def viewer(port: int, search: str, until: float, stats: Latencies) -> None:
    """One browser tab on the live page: both its callbacks every 2 s."""
    time.sleep(random.uniform(0, REFRESH_S))
    conn = Connection(port)
    headers = {"Content-Type": "application/json"}
    n, tick = 0, time.monotonic()
    while time.monotonic() < until:
        n += 1
        timed(stats, "live refresh", conn, "POST", "/_dash-update-component",
              bench.live_request(search, n), headers,
              lambda status, data: status == 200 and b"live-graph" in data)
        timed(stats, "live recent", conn, "POST", "/_dash-update-component",
              recent_request(search, n), headers,
              lambda status, data: status == 200 and b"live-recent" in data)
        tick += REFRESH_S
        time.sleep(max(0.0, tick - time.monotonic()))
    conn.close()


class Beacon:
    """A paced sender of /hit beacons; counts what the server accepted per page."""

    def __init__(self, port: int, rate: float, site: str, pages: list[str], seed: int):
        self.port, self.interval, self.site, self.pages = port, 1.0 / rate, site, pages
        self.rng = random.Random(seed)
        self.accepted = 0
        self.behind_max = 0.0
        self.finished = 0.0

    def run(self, until: float, stats: Latencies) -> None:
        conn = Connection(self.port)
        post_headers = {"Content-Type": "text/plain;charset=UTF-8"}
        due, i = time.monotonic(), 0
        while due < until:
            pause = due - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            else:
                self.behind_max = max(self.behind_max, -pause)
            page = self.rng.choice(self.pages)
            if i % 2:
                body = json.dumps({"site": self.site, "page": page}).encode()
                ok = timed(stats, "hit POST", conn, "POST", "/hit", body, post_headers,
                           lambda status, _data: status == 204)
            else:
                ok = timed(stats, "hit GET", conn, "GET", f"/hit?site={self.site}&page={page}",
                           None, {}, lambda status, data: status == 200 and data[:3] == b"GIF")
            self.accepted += ok
            i += 1
            due += self.interval
        self.finished = time.monotonic()
        conn.close()


def cpu_seconds(pid: int) -> float:
    """User + system CPU of ``pid`` and its descendants (Linux /proc), 0 elsewhere."""
    total = 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        for task in Path(f"/proc/{pid}/task").iterdir():
            children = (task / "children").read_text().split()
            total += sum(cpu_seconds(int(child)) for child in children)
    except (OSError, IndexError, ValueError):
        pass
    return total


def recorder_stats(port: int) -> dict:
    """The recorder's counters from /healthz, however long a rollup run holds the store."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=300) as response:
        return json.load(response)["recorder"]


def stop_server(server: subprocess.Popen) -> int:
    """SIGTERM, as a process manager stops it: the recorder flushes before exit."""
    server.send_signal(signal.SIGTERM)
    try:
        return server.wait(timeout=60)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
        return -9


def site_total(store: Path, site: str, days: int) -> int:
    db = queries.connect(str(store))
    try:
        now = dt.datetime.now(dt.UTC)
        frame = queries.daily_series(db, site, now - dt.timedelta(days=days + 2),
                                     now + dt.timedelta(days=1))
        return int(frame["*"].sum())
    finally:
        db.client.close()


def report(stats: Latencies, seconds: dict[str, float]) -> None:
    """One line per kind; ``seconds``: how long each kind was sent for."""
    print(f"{'kind':<13} {'requests':>8} {'per s':>7} {'errors':>6} {'p50 ms':>7} "
          f"{'p95 ms':>7} {'p99 ms':>7} {'max ms':>7}")
    for kind in ("live refresh", "live recent", "hit GET", "hit POST"):
        ms = [s * 1000 for s in stats.ok[kind]]
        errors = stats.errors[kind]
        count = len(ms) + len(errors)
        print(f"{kind:<13} {count:>8} {count / seconds[kind]:>7.1f} {len(errors):>6} "
              f"{bench.percentile(ms, 50):>7.1f} {bench.percentile(ms, 95):>7.1f} "
              f"{bench.percentile(ms, 99):>7.1f} {max(ms, default=float('nan')):>7.1f}")
        if errors:
            print(f"{'':<13} errors: {sorted(set(errors))[:5]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load")
    parser.add_argument("--viewers", type=int, default=100)
    parser.add_argument("--rate", type=float, default=1000.0, help="beacon hits per second")
    parser.add_argument("--beacon-threads", type=int, default=4)
    parser.add_argument("--threads", type=int, default=8, help="gunicorn threads")
    parser.add_argument("--days", type=int, default=3, help="days of seeded history")
    args = parser.parse_args()

    directory = Path(tempfile.mkdtemp(prefix="hitboard-viewers-"))
    store = directory / "store"
    try:
        seeded = bench.seed(store, args.days)
        port = bench.free_port()
        server = bench.start_server(store, port, args.threads, directory / "serve.log")
        search = f"?site={bench.SITE}&tz=Europe/Paris"
        print(f"hitboard serve on 127.0.0.1:{port}: 1 worker × {args.threads} threads, "
              f"{os.cpu_count()} CPUs; seeded {seeded:,} hits over {args.days} days")
        print(f"{args.viewers} viewers polling {search} every {REFRESH_S:.0f} s + "
              f"{args.rate:,.0f} hits/s from {args.beacon_threads} threads, "
              f"{args.duration:.0f} s", flush=True)
        stats = Latencies()
        beacons = [Beacon(port, args.rate / args.beacon_threads, bench.SITE, bench.PAGES, n)
                   for n in range(args.beacon_threads)]
        server_cpu, own_cpu = cpu_seconds(server.pid), time.process_time()
        started = time.monotonic()
        until = started + args.duration
        threads = [threading.Thread(target=viewer, args=(port, search, until, stats))
                   for _ in range(args.viewers)]
        threads += [threading.Thread(target=b.run, args=(until, stats)) for b in beacons]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - started
        server_cpu = cpu_seconds(server.pid) - server_cpu
        own_cpu = time.process_time() - own_cpu
        waited = time.perf_counter()
        recorder = recorder_stats(port)
        waited = time.perf_counter() - waited
        code = stop_server(server)
        counted = site_total(store, bench.SITE, args.days) - seeded
    finally:
        if "server" in locals() and server.poll() is None:
            server.kill()
        shutil.rmtree(directory, ignore_errors=True)

    span = max(b.finished for b in beacons) - started
    report(stats, {"live refresh": args.duration, "live recent": args.duration,
                   "hit GET": span, "hit POST": span})
    sent = sum(b.accepted for b in beacons)
    errors = sum(len(v) for v in stats.errors.values())
    print(f"hits sent {sent:,} in {span:.1f} s: {sent / span:,.0f}/s for {args.rate:,.0f}/s "
          f"asked (worst lag behind schedule {max(b.behind_max for b in beacons):.1f} s) · "
          f"counted {counted:,} · "
          f"{'equal' if sent == counted else f'DIFFER by {counted - sent:+,}'}")
    print(f"recorder before shutdown: {recorder['hits_accepted']:,} accepted, "
          f"{recorder['hits_written']:,} written, {recorder['flushes']:,} flushes, "
          f"{recorder['failures']} failures, {recorder['refused']} refused (/healthz answered "
          f"in {waited:.1f} s); server exit status {code}")
    print(f"CPU over {elapsed:.0f} s: server {server_cpu:.1f} s "
          f"({server_cpu / elapsed:.0%} of one core), load generator {own_cpu:.1f} s "
          f"({own_cpu / elapsed:.0%}); {os.cpu_count()} CPUs")
    return 1 if errors or sent != counted else 0


if __name__ == "__main__":
    sys.exit(main())
