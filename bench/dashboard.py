"""Many viewers on the live page: latency of its 2-second refresh callback under gunicorn.

Starts ``hitboard serve`` (gunicorn, one gthread worker) on a free loopback port with a
temporary embedded store seeded with 30 days of traffic, then runs 1, 10 and 50 viewers
that each POST the live page's refresh callback to ``/_dash-update-component`` every 2 s
(starting at random offsets, as real viewers do) for ``--duration`` seconds. Prints
p50/p95/p99 latency, errors, and how many reads the shared cache actually made.

    .venv/bin/python bench/dashboard.py               # 1, 10, 50 viewers, 30 s each
    .venv/bin/python bench/dashboard.py --clients 50 --duration 10
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import queries

SITE = "bench-site"
PAGES = [f"/page-{i:02d}" for i in range(20)]
REFRESH_S = 2.0
LIVE_OUTPUT = ("..live-graph.figure...live-kpis.children...live-top.children"
               "...live-updated.data...live-alert.children..")


def seed(store: Path, days: int) -> int:
    """``days`` of hourly traffic on 20 pages, and per-minute traffic for the last day."""
    rng = random.Random(1)
    db = queries.connect(str(store))
    queries.ensure_indexes(db)
    now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    total = 0
    with queries.HitRecorder(db, flush_interval=3600, preallocate_next_day=False) as recorder:
        start = now - dt.timedelta(days=days)
        for hour in range(days * 24 - 24):
            ts = start + dt.timedelta(hours=hour)
            for page in PAGES:
                n = rng.randint(20, 200)
                recorder.record(SITE, page, ts, n=n)
                total += n
        for minute in range(24 * 60):
            ts = now - dt.timedelta(minutes=minute)
            for page in PAGES:
                n = rng.randint(0, 4)
                if n:
                    recorder.record(SITE, page, ts, n=n)
                    total += n
    db.client.close()
    return total


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(store: Path, port: int, threads: int,
                 log: Path | None = None) -> subprocess.Popen:
    """``hitboard serve`` on a loopback port, once /healthz answers (server output goes to
    ``log`` when given, else stderr is kept for the error message)."""
    hitboard = Path(sys.executable).parent / "hitboard"
    env = {**os.environ, "HITBOARD_STORE": str(store)}
    command = [str(hitboard), "serve", "--port", str(port), "--threads", str(threads)]
    if log is None:
        server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
    else:
        with log.open("wb") as out:
            server = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            output = log.read_text()[-2000:] if log is not None else server.stderr.read()
            raise SystemExit(f"hitboard serve exited:\n{output}")
        try:
            health(port)
            return server
        except OSError:
            time.sleep(0.2)
    server.terminate()
    raise SystemExit("hitboard serve did not answer within 60 s")


def health(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as response:
        return json.load(response)


def live_request(search: str, n: int) -> bytes:
    """The body the browser posts when the live page's interval ticks."""
    return json.dumps({
        "output": LIVE_OUTPUT,
        "outputs": [{"id": i, "property": p} for i, p in (
            ("live-graph", "figure"), ("live-kpis", "children"), ("live-top", "children"),
            ("live-updated", "data"), ("live-alert", "children"))],
        "inputs": [{"id": "live-interval", "property": "n_intervals", "value": n},
                   {"id": "url", "property": "search", "value": search}],
        "changedPropIds": ["live-interval.n_intervals"],
        "state": [],
    }).encode()


def viewer(port: int, search: str, until: float, latencies: list, errors: list) -> None:
    """One browser tab: a keep-alive connection, one refresh every 2 s."""
    import http.client

    time.sleep(random.uniform(0, REFRESH_S))
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    n = 0
    next_tick = time.monotonic()
    while time.monotonic() < until:
        n += 1
        started = time.perf_counter()
        try:
            connection.request("POST", "/_dash-update-component", live_request(search, n),
                               {"Content-Type": "application/json"})
            response = connection.getresponse()
            body = response.read()
            if response.status != 200 or b"live-graph" not in body:
                errors.append(f"HTTP {response.status}")
            else:
                latencies.append(time.perf_counter() - started)
        except (OSError, http.client.HTTPException) as exc:
            errors.append(type(exc).__name__)
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        next_tick += REFRESH_S
        time.sleep(max(0.0, next_tick - time.monotonic()))
    connection.close()


def run_level(port: int, clients: int, duration: float, search: str) -> dict:
    before = health(port)["cache"]
    latencies: list[float] = []
    errors: list[str] = []
    until = time.monotonic() + duration
    threads = [threading.Thread(target=viewer, args=(port, search, until, latencies, errors))
               for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    after = health(port)["cache"]
    return {"clients": clients, "latencies": latencies, "errors": errors,
            "reads": after["misses"] - before["misses"],
            "served": after["hits"] - before["hits"] + after["misses"] - before["misses"]}


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def report(level: dict, duration: float) -> str:
    ms = [v * 1000 for v in level["latencies"]]
    requests = len(ms) + len(level["errors"])
    refreshes = duration / REFRESH_S
    return (f"{level['clients']:>7} {requests:>8} {len(level['errors']):>6} "
            f"{percentile(ms, 50):>8.1f} {percentile(ms, 95):>8.1f} {percentile(ms, 99):>8.1f} "
            f"{max(ms, default=float('nan')):>8.1f} {level['reads'] / refreshes:>13.1f} "
            f"{level['served'] / max(level['reads'], 1):>11.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 10, 50])
    parser.add_argument("--duration", type=float, default=30.0, help="seconds per level")
    parser.add_argument("--threads", type=int, default=8, help="gunicorn threads")
    parser.add_argument("--days", type=int, default=30, help="days of seeded traffic")
    parser.add_argument("--pages", action="store_true",
                        help="viewers select 5 pages instead of the whole site")
    args = parser.parse_args()

    directory = Path(tempfile.mkdtemp(prefix="hitboard-bench-"))
    try:
        started = time.perf_counter()
        hits = seed(directory / "store", args.days)
        print(f"seeded {hits:,} hits on {len(PAGES)} pages over {args.days} days "
              f"in {time.perf_counter() - started:.1f} s")
        port = free_port()
        server = start_server(directory / "store", port, args.threads)
        search = f"?site={SITE}&tz=Europe/Paris"
        if args.pages:
            search += "".join(f"&page={p}" for p in PAGES[:5])
        try:
            print(f"hitboard serve on 127.0.0.1:{port}: 1 worker × {args.threads} threads, "
                  f"{os.cpu_count()} CPUs; live callback every {REFRESH_S:.0f} s per viewer, "
                  f"{args.duration:.0f} s per level, view {search}")
            print(f"{'viewers':>7} {'requests':>8} {'errors':>6} {'p50 ms':>8} {'p95 ms':>8} "
                  f"{'p99 ms':>8} {'max ms':>8} {'reads/refresh':>13} {'served/read':>11}")
            for clients in args.clients:
                level = run_level(port, clients, args.duration, search)
                print(report(level, args.duration), flush=True)
                if level["errors"]:
                    print(f"        errors: {sorted(set(level['errors']))}")
        finally:
            server.terminate()
            server.wait(timeout=30)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
