"""Cost of the dimensions: ingest with and without them, and 12-month reads.

Usage: .venv/bin/python bench/ingest_dimensions.py [--copies N] [--rounds R] [--jobs J]
       [--repeated] [--paired N [--baseline CHECKOUT]]

1. Ingest: the shared log repeated ``--copies`` times (each copy shifted by 4 days, so
   agents and addresses repeat as in a longer log; with ``--repeated`` the copies keep
   their dates, as bench/ingest_vs_goaccess.py's file does, and each adds to the same
   hours), into a fresh embedded store, with
   dimensions and without, rounds alternating, best of each; with raw events (the
   default of ``hitboard ingest``) and without. Goal: with dimensions within 20%.
2. Reads: 365 days of synthetic dimensions (load generator backfill, one site); the
   store is closed and opened again before each read (cold), then every breakdown and
   the visitors count for the 12 months are timed, each breakdown also with bots left
   out (``humans=True``, read second, warm). Goal: each <= 300 ms.

``--paired N`` replaces both: the ingest with raw events, each run in a process of its
own, N rounds of (``--baseline``'s code with dimensions, this code with them, this code
without), means and medians. Runs of one machine drift (another tenant, the CPU's
clock) more than a version changes; runs side by side drift together.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# As in bench/loadgen.py: this folder's dashboard.py would shadow the package. A paired
# run of another checkout's code names it (``one_run``).
sys.path[0] = os.environ.get("HITBOARD_BENCH_CODE") or str(Path(__file__).resolve().parents[1])

import queries  # noqa: E402
from bench import logs  # noqa: E402
from dashboard.settings import resolve  # noqa: E402
from queries.counting import DimensionRecorder  # noqa: E402
from queries.dimensions import reads  # noqa: E402
from queries.ingest import gcmode  # noqa: E402
from queries.ingest import run as ingest  # noqa: E402
from queries.loadgen import TrafficModel  # noqa: E402
from queries.loadgen.history import backfill_dimensions  # noqa: E402

LOG = Path(__file__).resolve().parents[2] / "shared" / "data" / "apache_combined_2015.log"
SITE = "www.semicomplete.com"
STARTS: set[str] = set()    # how the worker processes were started
BY = ("referrer", "status", "browser", "os", "device", "country", "bot", "utm_source",
      "utm_medium", "utm_campaign", "page", "notfound")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def ingest_once(log: Path, dimensions: bool, events: bool, jobs: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process and its worker and dimension
    processes): the machine is shared, and CPU time is what other processes' load
    disturbs least."""
    where = tempfile.mkdtemp(prefix="hitboard-bench-")
    # A checkout with worker processes (before the ingest was one process) forks them
    # before the store opens, as its `hitboard ingest` did (spawned if this process runs
    # another thread: the summary says which).
    pool = (ingest.fork_workers(ingest.worker_config(where, None, SITE, "auto", events, None,
                                                     dimensions), jobs)
            if jobs > 1 and hasattr(ingest, "fork_workers") else None)
    if pool is not None:
        STARTS.add("forked" if pool.forked else "spawned")
    db = queries.connect(where)
    try:
        queries.ensure_indexes(db)
        ingestor = (ingest.Ingestor(db, site=SITE, events=events, dimensions=dimensions,
                                    jobs=jobs, store=where, pool=pool)
                    if pool is not None else
                    ingest.Ingestor(db, site=SITE, events=events, dimensions=dimensions))
        started, cpu = time.perf_counter(), time.process_time() + children_cpu()
        try:
            with gcmode.bulk():       # as `hitboard ingest` runs
                ingest.ingest_file(ingestor, log, "x")
        finally:
            ingestor.close()
            if pool is not None:
                pool.close()          # its processes end: their CPU time is counted
        return (time.perf_counter() - started,
                time.process_time() + children_cpu() - cpu)
    finally:
        db.client.close()
        shutil.rmtree(where, ignore_errors=True)


def bench_ingest(copies: int, rounds: int, jobs: int, repeated: bool = False) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "access.log"
        make, shape = ((logs.repeated, "same dates") if repeated
                       else (logs.shifted, "each copy 4 days later"))
        lines = make(LOG, copies * len(LOG.read_bytes().splitlines()), log)
        workers = (f"{jobs} worker processes" if jobs > 1 and hasattr(ingest, "fork_workers")
                   else "one process")
        print(f"== ingest: {lines:,} lines ({copies} x shared log, {shape}), {workers} (as "
              f"`hitboard ingest --jobs {jobs}`), best of {rounds} ==")
        for events in (True, False):
            wall = {True: float("inf"), False: float("inf")}
            cpu = dict(wall)
            for _ in range(rounds):
                for dims in (False, True):
                    took, used = ingest_once(log, dims, events, jobs)
                    wall[dims], cpu[dims] = min(wall[dims], took), min(cpu[dims], used)
            print(f"raw events {'on ' if events else 'off'}: without dimensions "
                  f"{lines / wall[False]:>7,.0f} lines/s, with {lines / wall[True]:>7,.0f} "
                  f"lines/s ({wall[True] / wall[False] - 1:+.0%} wall time); CPU "
                  f"{cpu[False]:.2f} s vs {cpu[True]:.2f} s ({cpu[True] / cpu[False] - 1:+.0%})")
        if STARTS:
            print(f"worker processes {' and '.join(sorted(STARTS))}")


def one_run(checkout: Path, log: Path, dimensions: bool, jobs: int) -> tuple[float, float]:
    """The wall and CPU seconds of ``ingest_once`` (raw events on) run by ``checkout``'s
    code in a process of its own (this script, ``--one``)."""
    done = subprocess.run(
        [sys.executable, __file__, "--one", str(log), "--jobs", str(jobs),
         *(["--dimensions"] if dimensions else [])],
        capture_output=True, text=True, check=True, cwd=checkout,
        env={**os.environ, "HITBOARD_BENCH_CODE": str(checkout)})
    wall, cpu = done.stdout.split()[-2:]
    return float(wall), float(cpu)


def bench_paired(copies: int, rounds: int, jobs: int, repeated: bool,
                 baseline: Path) -> None:
    here = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "access.log"
        lines = (logs.repeated if repeated else logs.shifted)(
            LOG, copies * len(LOG.read_bytes().splitlines()), log)
        print(f"== paired: {lines:,} lines ({'same dates' if repeated else 'in time order'}"
              f"), raw events on, {jobs} jobs, {rounds} rounds of (baseline {baseline} with "
              "dimensions, this with, this without) ==")
        runs = {"baseline": [], "with": [], "without": []}
        cpu = {name: [] for name in runs}
        for _ in range(rounds):
            for name, checkout, dimensions in (("baseline", baseline, True),
                                               ("with", here, True),
                                               ("without", here, False)):
                wall, used = one_run(checkout, log, dimensions, jobs)
                runs[name].append(wall)
                cpu[name].append(used)
            print("  " + "  ".join(f"{k} {v[-1]:.2f} s" for k, v in runs.items()))
        mean = {k: statistics.fmean(v) for k, v in runs.items()}
        median = {k: statistics.median(v) for k, v in runs.items()}
        for name, of in (("mean", mean), ("median", median)):
            print(f"{name:6}: baseline {of['baseline']:.2f} s "
                  f"({of['baseline'] / of['without'] - 1:+.0%}), this {of['with']:.2f} s "
                  f"({of['with'] / of['without'] - 1:+.0%}), without dimensions "
                  f"{of['without']:.2f} s; this against baseline "
                  f"{of['with'] / of['baseline']:.2f}x")
        used = {k: statistics.fmean(v) for k, v in cpu.items()}
        print(f"CPU   : baseline {used['baseline']:.2f} s "
              f"({used['baseline'] / used['without'] - 1:+.0%}), this {used['with']:.2f} s "
              f"({used['with'] / used['without'] - 1:+.0%}), without dimensions "
              f"{used['without']:.2f} s (means, all processes)")
        print(json.dumps({k: [round(x, 3) for x in v] for k, v in runs.items()}))


def bench_reads(days: int) -> None:
    where = tempfile.mkdtemp(prefix="hitboard-bench-reads-")
    try:
        now = dt.datetime.now(dt.UTC)
        db = queries.connect(where)
        queries.ensure_indexes(db)
        model = TrafficModel(sites=1, pages=30)
        started = time.perf_counter()
        with DimensionRecorder(db, flush_interval=3600) as recorder:
            hits = backfill_dimensions(recorder, model, 50.0, days, now)
        print(f"\n== reads: {days + 1} days of dimensions ({hits:,} hits) written in "
              f"{time.perf_counter() - started:.1f} s ==")
        db.client.close()
        site, start = model.site_names[0], now - dt.timedelta(days=days)
        for by in (*BY, "visitors"):
            opened = time.perf_counter()
            db = queries.connect(where, read_only=True)      # cold: a fresh open
            started = time.perf_counter()
            opening = started - opened
            if by == "visitors":
                result = reads.visitors(db, site, start, now).n
            else:
                result = len(reads.breakdown(db, site, by, start, now))
            took = (time.perf_counter() - started) * 1000
            humans = ""
            if by != "visitors":          # bots left out: v - b and the humans' sketches
                started = time.perf_counter()
                reads.breakdown(db, site, by, start, now, humans=True)
                humans = f", humans {(time.perf_counter() - started) * 1000:6.1f} ms"
            db.client.close()
            unit = "visitors" if by == "visitors" else "values"
            print(f"{by:14} {took:7.1f} ms{humans}  ({result:,} {unit}; opening the store "
                  f"took {opening:.1f} s before)")
    finally:
        shutil.rmtree(where, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--repeated", action="store_true",
                        help="copies keep their dates (default: each 4 days later)")
    parser.add_argument("--jobs", type=int, default=resolve().ingest_jobs,
                        help="ingest worker processes (default: hitboard ingest's)")
    parser.add_argument("--paired", type=int, default=0, metavar="N",
                        help="N rounds of paired runs against --baseline, nothing else")
    parser.add_argument("--baseline", type=Path, default=Path(__file__).resolve().parents[1],
                        help="a checkout to compare with (default: this one)")
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--dimensions", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(*ingest_once(args.one, args.dimensions, True, args.jobs))
        return
    if args.paired:
        bench_paired(args.copies, args.paired, args.jobs, args.repeated,
                     args.baseline.resolve())
        return
    bench_ingest(args.copies, args.rounds, args.jobs, args.repeated)
    bench_reads(args.days)


if __name__ == "__main__":
    main()
