"""`hitboard ingest` against GoAccess on the same access logs, in one run.

    .venv/bin/python bench/ingest_vs_goaccess.py
        [--inputs shifted:500000 shifted:2000000 longtail:1000000 repeated:500000]
        [--runs 1] [--bytes] [--baseline OTHER/.venv/bin/hitboard]
        [--hitboard-args "--no-events"] [--source LOG] [--seed 31]
    .venv/bin/python bench/ingest_vs_goaccess.py --quick        # 50,000 lines of each kind

Each input is ``KIND:LINES``, made by ``bench/logs.py`` (the command that makes it names
it in the table): ``shifted``, the shared 10,000-line log with each copy dated one span
(4 days) later, in time order as a real log; ``longtail``, the seeded long-tail log
(Zipf pages over ~94,000 paths, ~120,000 clients, browsers, crawlers and referrers, 120
days); ``repeated``, the shared log's same 4 days again and again (the file this bench
measured first). ``LOG --lines N [--shifted]``, as before, is one input of ``LOG``.

On each input, one tool after the other on the same file, read from the page cache:

- ``hitboard ingest FILE --site real`` with default settings (2 worker processes on 2
  cores; hit counters, every dimension, raw events, then the rollups) into a fresh
  embedded store, its environment cleared of ``HITBOARD_*`` and ``MONGODB_URI``;
- ``goaccess FILE --log-format=COMBINED -o report.json`` (Debian's goaccess: installed
  here with apt-get when run as root, else the comparison is skipped with the reason).
  GoAccess needs an IP address as the client: if a log has host names instead, both
  tools read a copy with addresses (198.18.0.0/15, a benchmarking range), made before
  timing.

Printed per input: wall seconds (medians over ``--runs``), hitboard's own rollup time
(its summary's line), CPU seconds (user + system of the process and its children), the
ratio GoAccess time / hitboard time (≥ 1.0: hitboard is faster), the store's size over
the log's (every file in the store directory once ``hitboard ingest`` has exited, raw
events included, no VACUUM), the peak RSS summed over each tool's process tree (sampled
every 50 ms from /proc; forked processes share pages, which the sum counts in each; its
largest process's beside it), and the load average (1 min) before and after the input.
``--bytes`` adds the store's bytes by collection and index (SQLite's ``dbstat``) of
each input's last hitboard store.

``--baseline`` times a second ``hitboard`` (another checkout's) in the same runs,
alternating with this one, so a before/after comparison shares the machine's load.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import logs

SHARED_LOG = logs.SHARED_LOG
DEFAULT_INPUTS = ("shifted:500000", "shifted:2000000", "longtail:1000000", "repeated:500000")
QUICK_INPUTS = ("shifted:50000", "longtail:50000", "repeated:50000")
SITE = "real"
SAMPLE_S = 0.05
_ROLLUPS = re.compile(r"rollups: ([\d,]+) hour buckets rewritten \(([\d.]+) s\)")
MB = 1e6


def with_ip_clients(source: Path, target: Path) -> int:
    """GoAccess's copy: a line whose client is a host name gets an address instead (one
    per name, from 198.18.0.0/15). Returns the names replaced (0: no copy needed)."""
    clients: dict[bytes, bytes] = {}        # a client as it is -> as GoAccess gets it
    renamed = 0
    base = int(ipaddress.IPv4Address("198.18.0.1"))
    with source.open("rb") as src, target.open("wb") as out:
        for line in src:
            head, sep, rest = line.partition(b" ")
            client = clients.get(head)
            if client is None:
                try:
                    ipaddress.ip_address(head.decode("ascii", "replace"))
                    client = clients[head] = head
                except ValueError:
                    client = clients[head] = str(ipaddress.IPv4Address(
                        base + renamed % 131_070)).encode()
                    renamed += 1
            out.write(client + sep + rest)
    return renamed


def goaccess() -> tuple[str | None, str]:
    found = shutil.which("goaccess")
    if found:
        return found, ""
    if os.geteuid() != 0:
        return None, "goaccess is not installed and this is not root (apt-get install goaccess)"
    result = subprocess.run(["apt-get", "install", "-y", "-qq", "goaccess"],
                            capture_output=True, text=True)
    if result.returncode:
        subprocess.run(["apt-get", "update", "-qq"], capture_output=True)
        result = subprocess.run(["apt-get", "install", "-y", "-qq", "goaccess"],
                                capture_output=True, text=True)
    found = shutil.which("goaccess")
    return (found, "") if found else (None, f"apt-get install goaccess failed: "
                                           f"{result.stderr.strip()[-200:]}")


class TreeRSS(threading.Thread):
    """The peak, over samples, of the RSS summed over a process and its descendants."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.peak, self.largest, self.processes = pid, 0, 0, 0
        self.done = threading.Event()
        self.page = os.sysconf("SC_PAGE_SIZE")

    def run(self) -> None:
        while not self.done.wait(SAMPLE_S):
            pids = self._tree()
            total = 0
            for pid in pids:
                try:
                    with open(f"/proc/{pid}/statm", "rb") as statm:
                        rss = int(statm.read().split()[1]) * self.page
                except (OSError, IndexError, ValueError):
                    continue
                total += rss
                self.largest = max(self.largest, rss)
            self.peak = max(self.peak, total)
            self.processes = max(self.processes, len(pids))

    def _tree(self) -> list[int]:
        found, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            found.append(pid)
            try:
                tasks = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for task in tasks:
                try:
                    with open(f"/proc/{pid}/task/{task}/children", "rb") as children:
                        todo.extend(int(child) for child in children.read().split())
                except OSError:
                    pass
        return found

    def stop(self) -> int:
        self.done.set()
        self.join()
        return self.peak


@dataclass
class Run:
    wall: float
    cpu: float
    rss: int                    # peak of the tree's sum
    largest: int = 0            # peak of its largest process
    store: int = 0              # bytes of the store directory (hitboard)
    rollups: float | None = None
    stderr: str = ""


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> Run:
    """One process tree: wall and CPU seconds, its peak summed RSS."""
    before = os.times()
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    sampler = TreeRSS(process.pid)
    sampler.start()
    out, err = process.communicate()
    elapsed = time.perf_counter() - started
    peak = sampler.stop()
    after = os.times()
    if process.returncode:
        raise SystemExit(f"{command[0]} failed ({process.returncode}): {err[-1500:]}")
    rollups = _ROLLUPS.search(err)
    return Run(elapsed, after.children_user - before.children_user
               + after.children_system - before.children_system, peak, sampler.largest,
               rollups=float(rollups.group(2)) if rollups else None, stderr=out + err)


def directory_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def store_bytes(database: Path) -> list[tuple[str, str, int, int]]:
    """(collection, table or index, bytes, rows) of an embedded store's file (dbstat)."""
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as conn:
        rows = conn.execute(
            "SELECT name, SUM(pgsize), SUM(CASE WHEN pagetype = 'leaf' THEN ncell END) "
            "FROM dbstat GROUP BY name").fetchall()
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        size = conn.execute("PRAGMA page_size").fetchone()[0]
    found = []
    for name, used, cells in rows:
        auto = name.startswith("sqlite_autoindex_")
        if auto:
            name = re.sub(r"_\d+$", "", name.removeprefix("sqlite_autoindex_"))
        collection, _, index = name.partition("/")
        collection = collection.removeprefix("hitboard.")
        found.append((collection, "_id (unique)" if auto else index or "(documents)", used,
                      cells or 0))
    free = pages * size - sum(row[2] for row in found)
    if free:
        found.append(("(free pages)", "", free, 0))
    return found


def print_bytes(label: str, rows: list[tuple[str, str, int, int]], log_size: int,
                lines: int) -> None:
    by_collection: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
    for collection, part, used, cells in rows:
        by_collection[collection].append((part, used, cells))
    total = sum(row[2] for row in rows)
    print(f"\nstore bytes by collection, {label} ({total / MB:,.1f} MB in hitboard.sqlite3, "
          f"{total / log_size:.2f}× the log, {total / lines:,.0f} B a line):\n")
    print("| collection | MB | share | × log | documents | B a document, indexes included "
          "| table MB | indexes MB |")
    print("|---|---|---|---|---|---|---|---|")
    ranked = sorted(by_collection.items(), key=lambda item: -sum(u for _, u, _ in item[1]))
    for collection, parts in ranked:
        whole = sum(used for _, used, _ in parts)
        if whole < 0.05 * MB:
            continue
        table = sum(used for part, used, _ in parts if part in ("(documents)", ""))
        count = sum(cells for part, _, cells in parts if part == "(documents)")
        indexes = ", ".join(f"{part} {used / MB:,.1f}" for part, used, _ in
                            sorted(parts, key=lambda p: -p[1])
                            if part not in ("(documents)", "") and used >= 0.05 * MB)
        print(f"| {collection} | {whole / MB:,.1f} | {whole / total:.1%} | "
              f"{whole / log_size:.2f} | {f'{count:,}' if count else ''} | "
              f"{f'{whole / count:,.0f}' if count else ''} | {table / MB:,.1f} | "
              f"{indexes or '–'} |")


@dataclass
class Input:
    kind: str
    lines: int
    command: str = ""
    log: Path | None = None
    size: int = 0
    renamed: int = 0
    load: list[str] = field(default_factory=list)
    results: dict[str, list[Run]] = field(default_factory=dict)
    breakdown: list | None = None


def parse_input(text: str) -> tuple[str, int]:
    kind, _, lines = text.partition(":")
    if kind not in logs.KINDS or not lines.replace("_", "").isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: give KIND:LINES, KIND one of "
                                         f"{', '.join(logs.KINDS)}")
    return kind, int(lines.replace("_", ""))


def clean_env() -> dict[str, str]:
    """This environment without the settings that would make hitboard's not default."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith("HITBOARD_") and k != "MONGODB_URI"}


def load1() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", nargs="?", type=Path, default=None,
                        help="with --lines: one input, this log repeated (or --shifted)")
    parser.add_argument("--lines", type=int, default=None)
    parser.add_argument("--shifted", action="store_true",
                        help="with --lines: each copy dated one span later")
    parser.add_argument("--inputs", nargs="+", type=parse_input, default=None,
                        metavar="KIND:LINES",
                        help=f"default: {' '.join(DEFAULT_INPUTS)}")
    parser.add_argument("--quick", action="store_true",
                        help=f"the inputs {' '.join(QUICK_INPUTS)}")
    parser.add_argument("--source", type=Path, default=SHARED_LOG,
                        help="the log that shifted and repeated inputs copy")
    parser.add_argument("--seed", type=int, default=logs.SEED, help="the long-tail log's")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--bytes", action="store_true",
                        help="each input's store bytes by collection and index")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="another hitboard executable to time in the same runs")
    parser.add_argument("--hitboard-args", default="",
                        help="extra arguments of this checkout's hitboard ingest")
    args = parser.parse_args()
    source = args.log or args.source
    if args.lines is not None:
        chosen = [("shifted" if args.shifted else "repeated", args.lines)]
    else:
        chosen = args.inputs or [parse_input(t) for t in
                                 (QUICK_INPUTS if args.quick else DEFAULT_INPUTS)]
    tools = {"hitboard": [str(Path(sys.executable).parent / "hitboard"),
                          *args.hitboard_args.split()]}
    if args.baseline:
        tools["baseline"] = [str(args.baseline)]
    tool, reason = goaccess()
    env = clean_env()
    inputs = [Input(kind, lines, logs.command(kind, lines, source, args.seed))
              for kind, lines in chosen]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="hitboard-bench-goaccess-") as tmp:
        work = Path(tmp)
        for number, item in enumerate(inputs):
            made = time.perf_counter()
            item.log = work / f"input-{number}.log"
            item.lines = logs.make(item.kind, item.lines, item.log, source, args.seed)
            if tool:
                item.renamed = with_ip_clients(item.log, work / "with-ip.log")
                if item.renamed:
                    item.log.unlink()
                    (work / "with-ip.log").rename(item.log)
                else:
                    (work / "with-ip.log").unlink()
            item.size = item.log.stat().st_size
            print(f"[{item.command}: {item.lines:,} lines, {item.size / MB:,.1f} MB, made in "
                  f"{time.perf_counter() - made:.1f} s]", file=sys.stderr, flush=True)
            item.results = {name: [] for name in tools}
            if tool:
                item.results["goaccess"] = []
            item.load.append(load1())
            for run in range(args.runs):
                for name, command in tools.items():
                    store = work / f"store-{number}-{name}-{run}"
                    result = timed([command[0], "ingest", str(item.log), "--site", SITE,
                                    "--store", str(store), *command[1:]], work, env)
                    result.store = directory_bytes(store)
                    if args.bytes and name == "hitboard" and run == args.runs - 1:
                        item.breakdown = store_bytes(store / "hitboard.sqlite3")
                    shutil.rmtree(store, ignore_errors=True)
                    item.results[name].append(result)
                    print(f"  {name}: {result.wall:.2f} s, load {load1()}", file=sys.stderr,
                          flush=True)
                if tool:
                    result = timed([tool, str(item.log), "--log-format=COMBINED",
                                    "-o", str(work / "report.json"), "--no-progress"], work,
                                   env)
                    item.results["goaccess"].append(result)
                    print(f"  goaccess: {result.wall:.2f} s, load {load1()}",
                          file=sys.stderr, flush=True)
            item.load.append(load1())
            item.log.unlink()
    report(inputs, tools, tool, reason, args, time.perf_counter() - started)


def report(inputs: list[Input], tools: dict, goaccess_tool, reason: str, args,
           elapsed: float) -> None:
    print(f"`hitboard ingest LOG --site {SITE}` (default settings, a fresh embedded store) "
          f"against {'GoAccess' if goaccess_tool else 'nothing'} on the same file, "
          f"{args.runs} run(s) each (medians), {os.cpu_count()} cores, "
          f"{elapsed / 60:.1f} min in all\n")
    print("| input: the command that makes it | lines | log MB | tool | s | rollups s | "
          "CPU s | lines/s | ratio | store MB | store / log | peak RSS MB: tree "
          "(largest process) | load before → after |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for item in inputs:
        goaccess_s = (statistics.median(r.wall for r in item.results["goaccess"])
                      if "goaccess" in item.results else None)
        for name, runs in item.results.items():
            wall = statistics.median(r.wall for r in runs)
            cpu = statistics.median(r.cpu for r in runs)
            rss = statistics.median(r.rss for r in runs)
            largest = statistics.median(r.largest for r in runs)
            rollups = [r.rollups for r in runs if r.rollups is not None]
            store = statistics.median(r.store for r in runs) if name != "goaccess" else None
            ratio = (f"**{goaccess_s / wall:.2f}×**" if goaccess_s and name != "goaccess"
                     else "")
            first = name == next(iter(item.results))
            print(f"| {f'`{item.command}`' if first else ''} | "
                  f"{f'{item.lines:,}' if first else ''} | "
                  f"{f'{item.size / MB:,.0f}' if first else ''} | {name} | "
                  f"{' / '.join(f'{r.wall:.2f}' for r in runs)} | "
                  f"{f'{statistics.median(rollups):.2f}' if rollups else ''} | {cpu:.1f} | "
                  f"{item.lines / wall:,.0f} | {ratio} | "
                  f"{f'{store / MB:,.0f}' if store is not None else ''} | "
                  f"{f'**{store / item.size:.2f}×**' if store is not None else ''} | "
                  f"{rss / MB:,.0f} ({largest / MB:,.0f}) | "
                  f"{' → '.join(item.load) if first else ''} |")
    if not goaccess_tool:
        print(f"\ngoaccess skipped: {reason}")
    renamed = [item for item in inputs if item.renamed]
    for item in renamed:
        print(f"\n({item.command}: {item.renamed:,} host names given addresses, for GoAccess)")
    for item in inputs:
        if item.breakdown:
            print_bytes(f"`{item.command}`", item.breakdown, item.size, item.lines)


if __name__ == "__main__":
    main()
