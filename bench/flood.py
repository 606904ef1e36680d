"""A flood of made-up sites and pages on /hit, against as many hits on existing pages:
are RSS, store growth and page times within 10%?

Two fresh ``hitboard serve`` processes (one worker each, rollups off, caches of 1 s so
that every page round computes, ``MALLOC_ARENA_MAX=2``: with glibc's default two equal
servers' RSS differ by up to 20%, as threads land on different arenas), each on its
own copy of one seeded embedded store: ``--days`` of history on ``--existing`` pages of
three sites registered with ``hitboard site add``. Both get the same number of
``GET /hit`` requests at the same time and pace, ``--rate`` a second, from ``--clients``
keep-alive connections each (a client process per server). The same pace matters: raw
events are written a bucket per site and flush, so a server taking the hits in 140 s
instead of 106 holds them in a third more buckets, and Live reads a third more (its
people and referrers callback 1.3× for that alone):

  flood     ``--sites`` requests, each naming a new site (refused: not registered), and
            ``--pages`` requests, each for a new page of the first site (past
            ``beacon_pages_per_day`` a day, counted under ``/(other)``), shuffled
  baseline  as many requests on existing pages: ``--pages`` on the first site's, as
            many as the flood sends it, ``--sites`` on the two others'

Once the store's counts reach the 2xx answers (every answered hit written), it measures
on each: the server's RSS (its process tree, /proc; now and peak) and CPU (idle, then
during the page rounds), the site dropdown (the shell callback's options), page times
(median of ``--rounds``, the servers taking turns: the Live and History views as a
browser loads them: ``GET /``, ``/_dash-layout``, the shell, the page's layout and its
data callbacks), a rollup run (``hitboard rollup``), then stops the server and sums its
store directory (every file; ``--detail``: by collection). Prints flood, baseline,
their ratio and whether each is within ``--tolerance``; checks that every 2xx'd hit is
counted and no refused site is stored. ``--same`` gives both servers the baseline: the
ratios' noise on this machine.

    .venv/bin/python bench/flood.py                              # the issue's figures
    .venv/bin/python bench/flood.py --sites 2000 --pages 5000 --pages-per-day 1000
    .venv/bin/python bench/flood.py --same                       # two equal servers
"""

from __future__ import annotations

import argparse
import http.client
import multiprocessing
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections import Counter
from pathlib import Path

from benchkit import load
from flood_report import print_report
from views import page_rounds, site_options

import queries
from queries.stats import schema

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
SITES = ("bench-site", "blog.example", "shop.example")
IDLE_S = 5.0          # seconds the servers' CPU is watched after the hits, before the pages
AGENT = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"


seeding = load("bench_dashboard", HERE / "dashboard.py")
hostile = load("hostilekit", HERE.parent / "tests" / "hostilekit.py")


# -- the stores --------------------------------------------------------------------------

def existing_pages(n: int) -> list[str]:
    return [f"/page-{i:02d}" for i in range(n)]


def seed(store: Path, days: int, pages: int) -> None:
    """``days`` of hourly hits on ``pages`` pages of each site, registered as the
    operator registers them, so the baseline's pages exist and History has a past."""
    import datetime as dt

    rng = random.Random(1)
    db = queries.connect(str(store))
    queries.ensure_indexes(db)
    start = dt.datetime.now(dt.UTC).replace(minute=0, second=0, microsecond=0)
    start -= dt.timedelta(days=days)
    with queries.HitRecorder(db, flush_interval=3600, preallocate_next_day=False) as recorder:
        for hour in range(days * 24):
            for site in SITES:
                for page in existing_pages(pages):
                    recorder.record(site, page, start + dt.timedelta(hours=hour),
                                    n=rng.randint(5, 50))
    db.client.close()
    for site in SITES:
        subprocess.run([str(BIN / "hitboard"), "site", "add", site, "--store", str(store)],
                       check=True, capture_output=True)


def tree_size(directory: Path) -> int:
    """Bytes of every file under ``directory``."""
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())


def counted(store: Path) -> dict[str, int]:
    """Hits per site in the store (the whole-site daily documents)."""
    db = queries.connect(str(store), read_only=True)
    try:
        found: Counter = Counter()
        for doc in db[schema.DAILY].find({"metadata.page": "*"}, {"metadata": 1, "daily": 1}):
            found[doc["metadata"]["site"]] += doc.get("daily", 0)
        return dict(found)
    finally:
        db.client.close()


def pages_today(store: Path, site: str) -> int:
    import datetime as dt

    db = queries.connect(str(store), read_only=True)
    try:
        day = schema.day_start(dt.datetime.now(dt.UTC))
        return db[schema.DAILY].count_documents(
            {"metadata.site": site, "metadata.date": day}) - 1
    finally:
        db.client.close()


def by_collection(store: Path) -> Counter:
    """Bytes of the store's SQLite file per collection (its tables and their indexes)."""
    con = sqlite3.connect(f"file:{store / 'hitboard.sqlite3'}?mode=ro", uri=True)
    try:
        names = dict(con.execute("SELECT tbl, name FROM hb_collections"))
        owner = dict(con.execute("SELECT name, tbl_name FROM sqlite_master"))
        sizes: Counter = Counter()
        for name, size in con.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name"):
            table = owner.get(name, name)
            sizes[names.get(table, table)] += size
        return sizes
    finally:
        con.close()


# -- the servers -------------------------------------------------------------------------

class Server:
    """``hitboard serve`` on its own copy of the seeded store."""

    def __init__(self, name: str, seeded: Path, directory: Path, env: dict[str, str]):
        self.name, self.port = name, seeding.free_port()
        self.store = directory / f"store-{name}"
        shutil.copytree(seeded, self.store)
        self.log = directory / f"{name}.log"
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                [str(BIN / "hitboard"), "serve", "--port", str(self.port)],
                env={**os.environ, **env, "HITBOARD_STORE": str(self.store)},
                stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while hostile.timed_get(self.port, "/healthz", 2) is None:
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{name} did not start: see {self.log}")
            time.sleep(0.3)

    def pids(self) -> list[int]:
        """The server and every process under it."""
        found = [self.process.pid]
        for pid in found:
            found.extend(hostile.children(pid))
        return found

    def rss_mib(self, field: str = "VmRSS") -> float:
        return sum(_status_kib(pid, field) for pid in self.pids()) / 1024

    def cpu_s(self) -> float:
        """CPU seconds the server's processes used so far (user and system)."""
        ticks = 0
        for pid in self.pids():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            ticks += int(fields[11]) + int(fields[12])
        return ticks / os.sysconf("SC_CLK_TCK")

    def health(self) -> dict:
        return seeding.health(self.port)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _status_kib(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


# -- the hits ----------------------------------------------------------------------------

def hit_path(site: str, page: str) -> str:
    return "/hit?" + urllib.parse.urlencode({"site": site, "page": page})


def flood_paths(sites: int, pages: int, seed_: int = 1) -> list[str]:
    """New site names and new pages of the first site, shuffled together."""
    paths = [hit_path(f"flood-{i:06d}.example", "/") for i in range(sites)]
    paths += [hit_path(SITES[0], f"/flood/{i:06d}") for i in range(pages)]
    random.Random(seed_).shuffle(paths)
    return paths


def baseline_paths(sites: int, pages: int, existing: int, seed_: int = 1) -> list[str]:
    """As many hits on existing pages, placed as the flood's: ``pages`` on the first
    site (the one viewed), ``sites`` on the others, shuffled together."""
    main = [hit_path(SITES[0], page) for page in existing_pages(existing)]
    others = [hit_path(site, page) for site in SITES[1:] for page in existing_pages(existing)]
    paths = [main[i % len(main)] for i in range(pages)]
    paths += [others[i % len(others)] for i in range(sites)]
    random.Random(seed_).shuffle(paths)
    return paths


def send(port: int, paths: list[str], clients: int, rate: float) -> tuple[Counter, float]:
    """GET every path from ``clients`` keep-alive connections, ``rate`` a second in all
    (0: as fast as answered); statuses and seconds."""
    statuses: Counter = Counter()
    lock = threading.Lock()
    started = time.perf_counter()

    def client(share: list[str]) -> None:
        seen: Counter = Counter()
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for i, path in enumerate(share):
            if rate:
                time.sleep(max(0.0, started + i * clients / rate - time.perf_counter()))
            try:
                connection.request("GET", path, headers={"User-Agent": AGENT})
                response = connection.getresponse()
                response.read()
                seen[response.status] += 1
            except (OSError, http.client.HTTPException) as exc:
                seen[type(exc).__name__] += 1
                connection.close()
        connection.close()
        with lock:
            statuses.update(seen)

    threads = [threading.Thread(target=client, args=(paths[i::clients],))
               for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return statuses, time.perf_counter() - started


def send_both(jobs: list[tuple[int, list[str]]], clients: int,
              rate: float) -> list[tuple[Counter, float]]:
    """Each server's hits from a process of its own, all at once (one client's GIL does
    not pace the other server)."""
    with multiprocessing.get_context("fork").Pool(len(jobs)) as pool:
        return pool.starmap(send, [(port, paths, clients, rate) for port, paths in jobs])


def wait_counted(server: Server, before: int, expected: int, timeout: float) -> float:
    """Seconds until the store holds ``expected`` more hits and nothing waits in the
    recorder (SystemExit past ``timeout``)."""
    started = time.monotonic()
    while True:
        recorder = server.health()["recorder"]
        stored = sum(counted(server.store).values()) - before
        if stored >= expected and not recorder["pending_hits"]:
            return time.monotonic() - started
        if time.monotonic() - started > timeout:
            raise SystemExit(f"{server.name}: {stored:,} of {expected:,} hits counted after "
                             f"{timeout:.0f} s (recorder {recorder})")
        time.sleep(0.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", type=int, default=20_000, help="new site names (flood)")
    parser.add_argument("--pages", type=int, default=50_000, help="new pages (flood)")
    parser.add_argument("--existing", type=int, default=5, help="pages per site (seeded)")
    parser.add_argument("--days", type=int, default=7, help="days of seeded history")
    parser.add_argument("--clients", type=int, default=4, help="connections per server")
    parser.add_argument("--rate", type=float, default=350.0,
                        help="requests a second to each server (0: as fast as answered)")
    parser.add_argument("--rounds", type=int, default=7, help="page-time rounds")
    parser.add_argument("--pages-per-day", type=int, default=None,
                        help="beacon_pages_per_day for both servers (default: theirs)")
    parser.add_argument("--arenas", type=int, default=2,
                        help="MALLOC_ARENA_MAX of both servers (0: glibc's default, with "
                             "which two equal servers' RSS differ by up to 20%%)")
    parser.add_argument("--same", action="store_true",
                        help="both servers get the baseline's hits: how far apart two equal "
                             "servers are (each ratio's noise on this machine)")
    parser.add_argument("--tolerance", type=float, default=0.10)
    parser.add_argument("--detail", action="store_true", help="store bytes by collection")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()
    run(args)


def run(args) -> None:
    directory = Path(tempfile.mkdtemp(prefix="hitboard-flood-"))
    env = {"HITBOARD_ROLLUP_INTERVAL": "0", "HITBOARD_CACHE_SECONDS": "1"}
    if args.pages_per_day is not None:
        env["HITBOARD_BEACON_PAGES_PER_DAY"] = str(args.pages_per_day)
    if args.arenas:
        env["MALLOC_ARENA_MAX"] = str(args.arenas)
    servers: list[Server] = []
    began = time.monotonic()
    try:
        seed(directory / "seeded", args.days, args.existing)
        seeded_bytes = tree_size(directory / "seeded")
        servers = [Server(name, directory / "seeded", directory, env)
                   for name in ("flood", "baseline")]
        report = measure(servers, args, seeded_bytes)
        print_report(report, args, seeded_bytes, time.monotonic() - began, SITES)
    finally:
        for server in servers:
            server.stop()
        if args.keep:
            print(f"kept {directory}")
        else:
            shutil.rmtree(directory, ignore_errors=True)


def measure(servers: list[Server], args, seeded_bytes: int) -> dict:
    flood, base = servers
    total = args.sites + args.pages
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; flood: {args.sites:,} new "
          f"sites + {args.pages:,} new pages of {SITES[0]}; baseline: {total:,} hits on "
          f"{args.existing} existing pages of each of {len(SITES)} sites; {args.clients} "
          f"connections each, {args.rate:,.0f} requests a second",
          flush=True)
    report = {s.name: {"rss_before": s.rss_mib(), "before": sum(counted(s.store).values())}
              for s in servers}
    flooding = (baseline_paths(args.sites, args.pages, args.existing) if args.same
                else flood_paths(args.sites, args.pages))
    jobs = [(flood.port, flooding),
            (base.port, baseline_paths(args.sites, args.pages, args.existing))]
    results = send_both(jobs, args.clients, args.rate)
    for server, (statuses, seconds) in zip(servers, results, strict=True):
        entry = report[server.name]
        entry.update(statuses=statuses, send_s=seconds)
        ok = sum(n for status, n in statuses.items() if isinstance(status, int) and status < 300)
        entry["ok"] = ok
        entry["wait_s"] = wait_counted(server, entry["before"], ok, 180)
        entry["counted"] = counted(server.store)
        entry["rss_hits"] = server.rss_mib()
        entry["site_options"] = site_options(server.port, SITES[0])
        entry["pages_today"] = pages_today(server.store, SITES[0])
    print(f"hits sent in {report['flood']['send_s']:.1f} s (flood) and "
          f"{report['baseline']['send_s']:.1f} s (baseline); load {os.getloadavg()[0]:.1f}",
          flush=True)
    idle = [s.cpu_s() for s in servers]
    time.sleep(IDLE_S)
    for server, before in zip(servers, idle, strict=True):
        report[server.name]["idle_cpu"] = (server.cpu_s() - before) / IDLE_S
        report[server.name]["cpu_before_pages"] = server.cpu_s()
    report["pages"] = page_rounds(servers, SITES[0], args.rounds)
    for server in servers:
        entry = report[server.name]
        entry["rss_pages"] = server.rss_mib()
        entry["pages_cpu"] = server.cpu_s() - entry["cpu_before_pages"]
        entry["rss_peak"] = server.rss_mib("VmHWM")
        started = time.perf_counter()
        subprocess.run([str(BIN / "hitboard"), "rollup", "--store", str(server.store)],
                       check=True, capture_output=True)
        entry["rollup_s"] = time.perf_counter() - started
        server.stop()
        entry["store"] = tree_size(server.store)
        entry["collections"] = by_collection(server.store)
    return report


if __name__ == "__main__":
    main()
