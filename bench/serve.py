"""``hitboard serve`` facing the internet, against today's threaded worker, in one run.

Starts each server on a free loopback port with its own copy of a seeded embedded store
(30 days of 20 pages, bench/dashboard.py's), rollups off, one worker each unless named:

  frontdoor  ``hitboard serve``: this version's worker (gevent's hub waits on sockets,
             threads parse and run whole requests; dashboard/frontdoor/worker.py)
  frontdoor2 the same with two workers
  fsync      ``hitboard serve`` with ``journal_sync``: each group of /hit records
             fdatasync'ed before it is answered
  gthread    the baseline, today's ``hitboard serve``: the same app under gunicorn's
             gthread worker, 8 threads, keep-alive 5 s (this version's app: Flask's
             body limits apply to it too)
  gevent     gunicorn's gevent worker, monkey-patched, the app unchanged (``-k gevent``)
  gevent2    the same with two workers
  waitress   waitress (buffers whole requests, then a thread runs them), 8 threads
  baseline   ``hitboard serve`` of another checkout (``--baseline DIR``, with its own
             ``.venv``): e.g. main before a change, measured in the same run

and measures, per server (``--phases``):

  hit        ``ab -k -c 32 -n 20000`` on ``GET /hit``, the servers taking turns for
             ``--rounds`` rounds: median requests/s and p99, and the ratio to gthread
  slow       200 clients sending a request head and 200 a body, a byte a second each
             (cut off, they connect again), while ``/healthz`` and ``/hit`` are asked on
             fresh connections: p50/p99 and failures, then the hits sent are counted in
             the store
  history    4 threads rendering uncached History views (30 days by hour, 10 pages and
             their comparison, a new time zone each) while ``/hit`` and the Live
             callback are asked: their p50/p99, and the renders'
  body       256 MiB bodies to ``/hit`` (by Content-Length, then chunked): the answer and
             how much the worker's memory grew

    .venv/bin/python bench/serve.py                      # frontdoor and gthread, all phases
    .venv/bin/python bench/serve.py --servers frontdoor gthread gevent waitress --phases history
    .venv/bin/python bench/serve.py --servers frontdoor baseline --baseline ../base --phases hit

Sites register themselves with their first hit (``beacon_new_sites``), so every /hit is
counted: a run whose answers are not all 2xx stops, rather than time refusals.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zoneinfo
from pathlib import Path

from benchkit import load

import queries

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
AB = ["ab", "-q", "-k", "-c", "32", "-n", "20000"]
SITE = "bench-site"
ENV = {"fsync": {"HITBOARD_JOURNAL_SYNC": "1"}}
BASELINE = HERE.parent      # ``--baseline DIR``: another checkout's server
HISTORY = ("..history-graph.figure...history-totals.children...history-period.children..."
           "history-hint.children...history-alert.children...history-plotted.data..."
           "history-notes.children...history-compare-note.children...history-drill.data..",
           "..history-kpis.children...history-panels.children...history-filter.children..."
           "history-botshare.children...history-panel-notes.children..."
           "history-panels-key.data..")
# The panels' callback is told which panels the page shows already: none here.
HISTORY_STATE = {HISTORY[1]: [{"id": "history-panels-key", "property": "data"}]}


seeding = load("bench_dashboard", HERE / "dashboard.py")
hostile = load("hostilekit", HERE.parent / "tests" / "hostilekit.py")

GUNICORN = [str(BIN / "python"), "-m", "gunicorn", "--no-control-socket", "--keep-alive", "5"]
SERVERS = {
    "frontdoor": lambda port: [str(BIN / "hitboard"), "serve", "--port", str(port)],
    "fsync": lambda port: [str(BIN / "hitboard"), "serve", "--port", str(port)],
    "frontdoor2": lambda port: [str(BIN / "hitboard"), "serve", "--port", str(port),
                                "--workers", "2"],
    "gthread": lambda port: GUNICORN + ["-k", "gthread", "--threads", "8", "-b",
                                        f"127.0.0.1:{port}", "dashboard:create_server()"],
    "gevent": lambda port: GUNICORN + ["-k", "gevent", "-b", f"127.0.0.1:{port}",
                                       "dashboard:create_server()"],
    "gevent2": lambda port: GUNICORN + ["-k", "gevent", "-w", "2", "-b", f"127.0.0.1:{port}",
                                        "dashboard:create_server()"],
    "baseline": lambda port: [str(BASELINE / ".venv" / "bin" / "hitboard"), "serve",
                              "--port", str(port)],
    "waitress": lambda port: [str(BIN / "waitress-serve"), f"--listen=127.0.0.1:{port}",
                              "--threads=8", "--connection-limit=2000", "--asyncore-use-poll",
                              "--call", "dashboard:create_server"],
}


class Server:
    def __init__(self, name: str, seeded: Path, directory: Path):
        self.name, self.port = name, seeding.free_port()
        self.store = directory / f"store-{name}"
        shutil.copytree(seeded, self.store)
        env = {**os.environ, "HITBOARD_STORE": str(self.store), "HITBOARD_ROLLUP_INTERVAL": "0",
               "HITBOARD_BEACON_NEW_SITES": "1000", **ENV.get(name, {})}
        self.log = (directory / f"{name}.log").open("wb")
        self.process = subprocess.Popen(SERVERS[name](self.port), env=env, stdout=self.log,
                                        stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while hostile.timed_get(self.port, "/healthz", 2) is None:
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{name} did not start: see {self.log.name}")
            time.sleep(0.3)

    def worker_pids(self) -> list[int]:
        return hostile.children(self.process.pid) or [self.process.pid]

    def counted(self, site: str) -> int:
        db = queries.connect(str(self.store))
        try:
            return int(queries.top_pages(db, site, *_today())["hits"].sum())
        finally:
            db.client.close()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


def _today():
    import datetime as dt
    now = dt.datetime.now(dt.UTC)
    return now - dt.timedelta(hours=2), now + dt.timedelta(hours=1)


def ab(port: int) -> tuple[float, float]:
    out = subprocess.run(AB + [f"http://127.0.0.1:{port}/hit?site=bench-ab&page=/x"],
                         capture_output=True, text=True, timeout=600).stdout
    refused = re.search(r"Non-2xx responses:\s+(\d+)", out)
    if refused:
        raise SystemExit(f"{refused[1]} answers to /hit were not 2xx: nothing to time")
    rate = float(re.search(r"Requests per second:\s+([\d.]+)", out)[1])
    return rate, float(re.search(r"^\s+99%\s+(\d+)", out, re.M)[1])


def phase_hit(servers: list[Server], rounds: int) -> None:
    runs = {s.name: [] for s in servers}
    for _ in range(rounds):
        for server in servers:
            runs[server.name].append(ab(server.port))
    against = "baseline" if "baseline" in runs else "gthread"
    base = statistics.median(r for r, _ in runs[against]) if against in runs else None
    print(f"\n/hit throughput: {' '.join(AB)} (median of {rounds} rounds, alternating)")
    for name, results in runs.items():
        rate = statistics.median(r for r, _ in results)
        ratio = f"  {rate / base:.2f}x {against}" if base else ""
        print(f"  {name:10} {rate:8,.0f} req/s  p99 {statistics.median(p for _, p in results):5.0f}"
              f" ms  rounds {', '.join(f'{r:,.0f}' for r, _ in results)}{ratio}")


def probe(port: int, until: float, site: str, extra=None) -> dict[str, list]:
    """/healthz and /hit (and ``extra()``, timed) on fresh connections, in turn."""
    seen = {"healthz": [], "hit": [], "failed": [], "sent": 0}
    while time.monotonic() < until:
        for kind in ("healthz", "hit") + (("extra",) if extra else ()):
            if kind == "extra":
                took = extra()
            else:
                path = "/healthz" if kind == "healthz" else f"/hit?site={site}&page=/p"
                took = hostile.timed_get(port, path, 5.0)
                seen["sent"] += kind == "hit"
            (seen.setdefault(kind, []) if took is not None else seen["failed"]).append(
                took if took is not None else kind)
        time.sleep(0.05)
    return seen


def _line(name: str, seconds: list[float]) -> str:
    if not seconds:
        return f"{name} none answered"
    ms = [s * 1000 for s in seconds]
    return f"{name} p50 {statistics.median(ms):.0f} p99 {hostile.p99(ms):.0f} ms"


def phase_slow(server: Server, seconds: float) -> None:
    site = f"slow-{server.name}"
    with hostile.SlowClients(server.port, heads=200, bodies=200) as slow:
        time.sleep(2)
        seen = probe(server.port, time.monotonic() + seconds, site)
        connected = slow.connected
    time.sleep(3)                       # the recorder's flush (every second)
    answered = len(seen["hit"])
    print(f"  {server.name:10} {_line('/healthz', seen['healthz'])}, "
          f"{_line('/hit', seen['hit'])}; {len(seen['failed'])} failed of "
          f"{2 * seen['sent']}; hits answered {answered}, counted {server.counted(site)}; "
          f"slow clients connected {connected}, cut {slow.cut} {dict(slow.statuses)}")


def history_body(output: str, search: str) -> bytes:
    outputs = [dict(zip(("id", "property"), pair.split("."), strict=True))
               for pair in output.strip(".").split("...")]
    return json.dumps({"output": output, "outputs": outputs, "inputs": [
        {"id": "url", "property": "search", "value": search}],
        "changedPropIds": ["url.search"], "state": HISTORY_STATE.get(output, [])}).encode()


def post(port: int, body: bytes, timeout: float = 60) -> float | None:
    started = time.perf_counter()
    status, _ = hostile.request(port, b"POST /_dash-update-component HTTP/1.1\r\nHost: b\r\n"
                                b"Content-Type: application/json\r\nConnection: close\r\n"
                                b"Content-Length: %d\r\n\r\n%s" % (len(body), body), timeout)
    return time.perf_counter() - started if status == 200 else None


def phase_history(server: Server, seconds: float, renderers: int) -> None:
    zones = iter(sorted(zoneinfo.available_timezones()))
    lock, renders, until = threading.Lock(), [], time.monotonic() + seconds
    pages = "&".join(f"page=/page-{i:02d}" for i in range(10))

    def render() -> None:
        while time.monotonic() < until:
            with lock:
                search = f"?site={SITE}&{pages}&tz={next(zones)}&range=30d&gran=hour&compare=1"
            for output in HISTORY:
                took = post(server.port, history_body(output, search))
                with lock:
                    renders.append(took)

    live = seeding.live_request(f"?site={SITE}", 1)
    threads = [threading.Thread(target=render) for _ in range(renderers)]
    for thread in threads:
        thread.start()
    seen = probe(server.port, until, f"history-{server.name}",
                 extra=lambda: post(server.port, live, 10))
    for thread in threads:
        thread.join()
    done = [r for r in renders if r is not None]
    print(f"  {server.name:10} {_line('/hit', seen['hit'])}, {_line('Live', seen['extra'])}, "
          f"{_line('/healthz', seen['healthz'])}, {len(seen['failed'])} failed; "
          f"{len(done)} History callbacks, {_line('each', done)}")


def phase_body(server: Server) -> None:
    results = []
    for chunked in (False, True):
        before = sum(map(hostile.rss_kib, server.worker_pids()))
        status = hostile.huge_body(server.port, "/hit", 256 * 1024 ** 2, chunked)
        time.sleep(0.5)
        grown = sum(map(hostile.rss_kib, server.worker_pids())) - before
        results.append(f"{'chunked' if chunked else 'Content-Length'}: {status}, "
                       f"RSS +{grown / 1024:.1f} MiB")
    print(f"  {server.name:10} " + "; ".join(results))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--servers", nargs="+", default=["frontdoor", "gthread"],
                        choices=list(SERVERS))
    parser.add_argument("--phases", nargs="+", default=["hit", "slow", "history", "body"],
                        choices=["hit", "slow", "history", "body"])
    parser.add_argument("--rounds", type=int, default=3, help="ab rounds per server")
    parser.add_argument("--seconds", type=float, default=20.0, help="per probe phase")
    parser.add_argument("--renderers", type=int, default=4)
    parser.add_argument("--baseline", type=Path, help="the checkout whose server is "
                        "'baseline' (its .venv installed)")
    args = parser.parse_args()
    if "baseline" in args.servers:
        if args.baseline is None:
            raise SystemExit("--servers baseline needs --baseline DIR")
        global BASELINE
        BASELINE = args.baseline.resolve()
    if shutil.which("ab") is None:
        raise SystemExit("ab is missing: apt-get install apache2-utils")
    directory = Path(tempfile.mkdtemp(prefix="hitboard-serve-bench-"))
    servers = []
    try:
        seeding.seed(directory / "seeded", 30)
        for name in args.servers:
            servers.append(Server(name, directory / "seeded", directory))
        print(f"servers: {', '.join(f'{s.name} (port {s.port})' for s in servers)}; "
              f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
        if "hit" in args.phases:
            phase_hit(servers, args.rounds)
        for phase, title in (("slow", "200 slow-header + 200 slow-body clients"),
                             ("history", f"{args.renderers} threads rendering History"),
                             ("body", "a 256 MiB body to /hit")):
            if phase in args.phases:
                print(f"\n{title}:")
                for server in servers:
                    {"slow": lambda s: phase_slow(s, args.seconds),
                     "history": lambda s: phase_history(s, args.seconds, args.renderers),
                     "body": phase_body}[phase](server)
        print(f"\nload at the end {os.getloadavg()[0]:.1f}")
    finally:
        for server in servers:
            server.stop()
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
