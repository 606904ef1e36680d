"""Where a `hitboard ingest` spends its time, stage by stage, in every thread and process.

    .venv/bin/python bench/ingest_stages.py [--input shifted:2000000] [--bytes]

Makes the input (``bench/logs.py``, as ``bench/ingest_vs_goaccess.py`` does), then runs
``hitboard ingest LOG --site real`` with default settings into a fresh embedded store,
in a process that first wraps the ingest's stages (the functions below; one its code no
longer has is left out and named) with a timer. The ingest is one process: its main
thread merges tallies and flushes the recorders while a thread of its own maps the next
chunk (``queries.ingest.run``); the rollups may start processes of their own, which are
spawned and so not traced. Each call of a wrapped function appends one line to a trace
(its process, thread, start and end, wall and CPU seconds of its own thread, less those
of the wrapped calls inside it); nothing else changes. The calls are per chunk, batch or
statement (the store's ``update``: per document updated, ~600,000 at 2,000,000 shifted
lines), at ~10 µs a record, ~1-2% of the run's CPU. Printed: CPU and wall seconds per
stage and thread, the embedded store's part of each stage (statements, the write lock's
wait, commits), the ingest's timeline, and the peak RSS of the process and of its
largest child. ``--bytes``: the store's bytes by collection and index (SQLite's
``dbstat``), as ``ingest_vs_goaccess.py --bytes`` prints them.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import inspect
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import logs  # noqa: E402

SITE = "real"
_trace_fd: int | None = None
_local = threading.local()

# (module, attribute path, stage). A stage whose name starts with "store:" is the
# embedded store's part of whichever stage called it.
STAGES = (
    ("queries.ingest.run", "Ingestor.merge", "ingest: merge tallies into the recorders"),
    ("queries.ingest.session", "LogSession.begin", "ingest: checkpoint (intent, commit)"),
    ("queries.ingest.session", "LogSession.commit", "ingest: checkpoint (intent, commit)"),
    ("queries.counting.engine", "CountEngine.flush", "{cls} flush"),
    ("queries.counting.engine", "CountEngine._documents", "{cls} flush: build documents"),
    ("queries.counting.guarded", "GuardedWrites._write", "{cls} flush: write"),
    ("queries.counting.guarded", "GuardedWrites._side_writes",
     "{cls} flush: write sketches"),
    ("concurrent.futures._base", "Future.result",
     "wait: a future (the next chunk mapped; the rollups' processes)"),
    ("queries.ingest.chunks", "read", "read the log"),
    ("queries.ingest.mapper", "LineMapper.map_chunk", "mapping: parse, classify, tally"),
    ("queries.dimensions.tally", "pending", "mapping: count dimensions"),
    ("queries.events.writer", "EventWriter.write_lines", "mapping: raw events"),
    ("queries.rollups.build", "start_rollups", "rollups: start (touched hours)"),
    ("queries.rollups.build", "finish_rollups", "rollups: finish, checkpoint, expiry"),
    ("queries.rollups.build", "roll_part", "rollups: a piece"),
    ("queries.rollups.build", "_hourly_documents", "rollups: hourly from events"),
    ("queries.rollups.build", "_level_documents", "rollups: upper levels (merge)"),
    ("queries.rollups.build", "write_level", "rollups: write"),
    ("queries.store.embedded.documents", "insert", "store: insert"),
    ("queries.store.embedded.documents", "prepare", "store: encode rows"),
    ("queries.store.embedded.documents", "update", "store: update"),
    ("queries.store.embedded.reading", "find", "store: find"),
    ("queries.store.embedded.reading", "aggregate", "store: aggregate"),
    ("queries.store.embedded.documents", "delete", "store: delete"),
)


def _emit(record: dict) -> None:
    os.write(_trace_fd, (json.dumps(record) + "\n").encode())


def _timed(function, stage: str):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        name = stage
        if "{cls}" in stage:
            cls = type(args[0]).__name__
            name = stage.format(cls="dimension recorder" if cls == "DimensionRecorder"
                                else "hit recorder" if cls == "HitRecorder" else cls)
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = []
        frame = [name, 0.0, 0.0]            # name, children's wall, children's CPU
        stack.append(frame)
        wall0, cpu0 = time.perf_counter(), time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            _close(stack, frame, name, wall0, time.perf_counter() - wall0,
                   time.thread_time() - cpu0)
    return wrapper


def _timed_generator(function, stage: str):
    """A generator timed step by step: each item it makes is one call."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        items = function(*args, **kwargs)
        step = _timed(lambda: next(items, _timed_generator), stage)
        while (item := step()) is not _timed_generator:
            yield item
    return wrapper


def _close(stack: list, frame: list, stage: str, wall0: float, wall: float,
           cpu: float) -> None:
    """End ``frame`` (the top of ``stack``): its time counts in its caller's children
    and is written to the trace, with the innermost enclosing stage not of the store."""
    stack.pop()
    if stack:
        stack[-1][1] += wall
        stack[-1][2] += cpu
    owner = next((f[0] for f in reversed(stack) if not f[0].startswith("store:")), None)
    _emit({"pid": os.getpid(), "thread": threading.current_thread().name,
           "stage": stage, "owner": owner, "t0": wall0, "wall": wall, "cpu": cpu,
           "own_wall": wall - frame[1], "own_cpu": cpu - frame[2]})


def _wrap_store_lock() -> None:
    """The write lock's wait (``flock``) and each transaction's BEGIN/COMMIT."""
    from queries.store.embedded import store

    real = store.fcntl

    class _Fcntl:
        LOCK_EX, LOCK_UN = real.LOCK_EX, real.LOCK_UN

        @staticmethod
        def flock(fd, op):
            return (_lock_wait(fd, op) if op == real.LOCK_EX else real.flock(fd, op))

        def __getattr__(self, name):
            return getattr(real, name)

    _lock_wait = _timed(real.flock, "store: write-lock wait")
    store.fcntl = _Fcntl()
    writing = store.EmbeddedStore.writing

    @contextlib.contextmanager
    def timed_writing(self):
        with _transaction(self) as con:
            yield con

    _transaction = _timed_cm(writing, "store: transaction (BEGIN, COMMIT)")
    store.EmbeddedStore.writing = timed_writing


def _timed_cm(writing, stage):
    """A context manager timed as one call, less the calls made inside its body."""
    @contextlib.contextmanager
    def wrapped(self):
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = []
        frame = [stage, 0.0, 0.0]
        stack.append(frame)
        wall0, cpu0 = time.perf_counter(), time.thread_time()
        body = [0.0, 0.0]
        try:
            with writing(self) as con:
                inner0, icpu0 = time.perf_counter(), time.thread_time()
                stack.pop()             # the body is its caller's, not the transaction's
                try:
                    yield con
                finally:
                    body[0], body[1] = (time.perf_counter() - inner0,
                                        time.thread_time() - icpu0)
                    stack.append(frame)
        finally:
            _close(stack, frame, stage, wall0, time.perf_counter() - wall0 - body[0],
                   time.thread_time() - cpu0 - body[1])
    return wrapped


def child(log: str, store: str, trace: str) -> None:
    """Run ``hitboard ingest`` here with the stages wrapped."""
    global _trace_fd
    import importlib

    here = str(Path(__file__).resolve().parent)     # bench/dashboard.py is no package
    sys.path[:] = [p for p in sys.path if p and Path(p).resolve() != Path(here)]

    _trace_fd = os.open(trace, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    for module, path, stage in STAGES:
        owner = importlib.import_module(module)
        *outer, name = path.split(".")
        for part in outer:
            owner = getattr(owner, part)
        if not hasattr(owner, name):
            print(f"(not traced: {module}.{path}, gone)", file=sys.stderr)
            continue
        function = getattr(owner, name)
        setattr(owner, name, _timed_generator(function, stage)
                if inspect.isgeneratorfunction(function) else _timed(function, stage))
    _wrap_store_lock()
    from dashboard.cli import main

    _emit({"pid": os.getpid(), "stage": "(start)", "t0": time.perf_counter()})
    sys.argv = ["hitboard", "ingest", log, "--site", SITE, "--store", store]
    try:
        main()
    finally:
        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        _emit({"pid": os.getpid(), "stage": "(end)", "t0": time.perf_counter(),
               "rss_kib": [own, child]})


def report(trace: Path, started: float, ended: float, main_pid: int) -> None:
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    marks = {r["stage"]: r["t0"] for r in records if r["stage"].startswith("(")}
    calls = [r for r in records if not r["stage"].startswith("(")]
    for r in calls:
        r["role"] = _role(r, main_pid)
    # (role, stage) -> [own CPU s, own wall s, calls]; store parts apart
    own: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    store_of: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(
        lambda: defaultdict(lambda: [0.0, 0.0]))
    for r in calls:
        role = r["role"]
        if r["stage"].startswith("store:"):
            parent = r["owner"] or "(outside the stages)"
            part = store_of[(role, parent)][r["stage"]]
            part[0] += r["own_cpu"]
            part[1] += r["own_wall"]
            own.setdefault((role, parent), [0.0, 0.0, 0])   # its row, even if empty
            continue
        row = own[(role, r["stage"])]
        row[0] += r["own_cpu"]
        row[1] += r["own_wall"]
        row[2] += 1
    t0 = marks.get("(start)", started)
    print(f"whole run: {ended - started:.1f} s wall (the ingest process's own start "
          f"{t0 - started:.1f} s after launch)\n")
    print("CPU and wall: of the thread that ran it (other threads: the recorders' timers, "
          "the store's), each stage's own, less the stages it called; store: the embedded "
          "store's statements, transactions and write-lock waits made by the stage.\n")
    print("| thread | stage | calls | CPU s | of which store | wall s | of which store | "
          "store parts (CPU s; the lock's wait: wall s) |")
    print("|---|---|---|---|---|---|---|---|")
    by_role: dict[str, float] = defaultdict(float)
    rows = []
    for (role, stage), (cpu, wall, n) in own.items():
        parts = store_of.get((role, stage), {})
        store_cpu = sum(p[0] for p in parts.values())
        store_wall = sum(p[1] for p in parts.values())
        rows.append((ROLE_ORDER.index(role), -(cpu + store_cpu), role, stage, n, cpu,
                     wall, store_cpu, store_wall, parts))
    for _, _, role, stage, n, cpu, wall, store_cpu, store_wall, parts in sorted(rows):
        if cpu + store_cpu < 0.05 and wall + store_wall < 0.05:
            continue
        by_role[role] += cpu + store_cpu
        detail = ", ".join(
            f"{name.removeprefix('store: ')} "
            + (f"{p[1]:.1f} s wall" if name.endswith("wait") else f"{p[0]:.1f}")
            for name, p in sorted(parts.items(), key=lambda kv: -max(kv[1]))
            if max(p) >= 0.05)
        print(f"| {role} | {stage} | {n or ''} | {cpu + store_cpu:.1f} | {store_cpu:.1f} | "
              f"{wall + store_wall:.1f} | {store_wall:.1f} | {detail} |")
    print("\nCPU s in the stages, per thread: " + ", ".join(
        f"{role} {cpu:.1f}" for role, cpu in sorted(by_role.items(),
                                                     key=lambda kv: ROLE_ORDER.index(kv[0])))
          + f"; in all {sum(by_role.values()):.1f}")
    _timeline(calls, t0, marks.get("(end)", ended))
    end = next((r for r in records if r["stage"] == "(end)"), {})
    if "rss_kib" in end:
        own, child = end["rss_kib"]
        print(f"\npeak RSS: the ingest process {own / 1024:,.0f} MB, its largest child "
              f"{child / 1024:,.0f} MB")


ROLE_ORDER = ["ingest: main thread", "ingest: mapping thread", "ingest: other threads",
              "other processes"]


def _role(record: dict, main_pid: int) -> str:
    if record["pid"] != main_pid:
        return "other processes"
    if record["thread"] == "MainThread":
        return "ingest: main thread"
    if record["thread"].startswith("hitboard-map"):
        return "ingest: mapping thread"
    return "ingest: other threads"


def _timeline(calls: list[dict], t0: float, end: float) -> None:
    """The ingest process's main thread, phase by phase, and its mapping thread."""
    main = [r for r in calls if r["role"] == "ingest: main thread"]
    merges = sorted(r["t0"] for r in main if r["stage"].startswith("ingest: merge"))
    flushes = sorted((r for r in main if r["stage"] == "hit recorder flush: write"),
                     key=lambda r: r["t0"])
    rollup_start = [r for r in main if r["stage"].startswith("rollups: start")]
    rollup_end = [r for r in main if r["stage"].startswith("rollups: finish")]
    work = [r for r in calls if r["role"] == "ingest: mapping thread"
            and r["stage"].startswith("mapping: parse")]
    print("\nthe ingest process's timeline (s from its start):\n")
    if work:
        print(f"- first chunk mapped {min(r['t0'] for r in work) - t0:.1f} → "
              f"{min(r['t0'] + r['wall'] for r in work) - t0:.1f}; last chunk mapped by "
              f"{max(r['t0'] + r['wall'] for r in work) - t0:.1f} ({len(work)} chunks, "
              f"{sum(r['wall'] for r in work):.1f} s mapping)")
    if merges:
        print(f"- tallies merged from {merges[0] - t0:.1f} to {merges[-1] - t0:.1f} "
              f"({len(merges)} tallies)")
    if flushes:
        print(f"- {len(flushes)} hit flushes written, {sum(r['wall'] for r in flushes):.1f} s "
              "in all (" + ", ".join(f"{r['t0'] - t0:.1f} → {r['t0'] + r['wall'] - t0:.1f}"
                                     for r in flushes[-3:]) + " the last)")
    dimension = sorted((r for r in main if r["stage"] == "dimension recorder flush: write"),
                       key=lambda r: r["t0"])
    if dimension:
        print(f"- {len(dimension)} dimension flushes written, "
              f"{sum(r['wall'] for r in dimension):.1f} s in all, the last ending "
              f"{dimension[-1]['t0'] + dimension[-1]['wall'] - t0:.1f}")
    waits = [r for r in main if r["stage"].startswith("wait:")]
    for stage in sorted({r["stage"] for r in waits}):
        print(f"- {stage}: {sum(r['wall'] for r in waits if r['stage'] == stage):.1f} s")
    if rollup_start and rollup_end:
        print(f"- rollups from {rollup_start[0]['t0'] - t0:.1f} to "
              f"{rollup_end[-1]['t0'] + rollup_end[-1]['wall'] - t0:.1f}")
    print(f"- exit {end - t0:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", default="shifted:2000000", metavar="KIND:LINES")
    parser.add_argument("--source", type=Path, default=logs.SHARED_LOG)
    parser.add_argument("--seed", type=int, default=logs.SEED)
    parser.add_argument("--bytes", action="store_true")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    kind, _, lines = args.input.partition(":")
    lines = int(lines)
    command = logs.command(kind, lines, args.source, args.seed)
    with tempfile.TemporaryDirectory(prefix="hitboard-bench-stages-") as tmp:
        work = Path(tmp)
        log, store, trace = work / "input.log", work / "store", work / "trace.jsonl"
        logs.make(kind, lines, log, args.source, args.seed)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("HITBOARD_") and k != "MONGODB_URI"}
        load = f"{os.getloadavg()[0]:.2f}"
        started = time.perf_counter()
        process = subprocess.Popen([sys.executable, __file__, "--child", str(log), str(store),
                                    str(trace)], cwd=work, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        out, err = process.communicate()
        ended = time.perf_counter()
        if process.returncode:
            raise SystemExit(f"hitboard ingest failed ({process.returncode}): {err[-1500:]}")
        print(f"`hitboard ingest LOG --site {SITE}`, LOG from `{command}` "
              f"({lines:,} lines, {log.stat().st_size / 1e6:,.0f} MB), load average "
              f"{load} before, {os.getloadavg()[0]:.2f} after; its summary:\n")
        print("\n".join(f"    {line}" for line in (err.splitlines()[-1:] + out.splitlines())
                        if line.strip()))
        print()
        report(trace, started, ended, process.pid)
        if args.bytes:
            import ingest_vs_goaccess

            size = sum(f.stat().st_size for f in store.rglob("*") if f.is_file())
            print(f"\nstore directory: {size / 1e6:,.1f} MB, {size / log.stat().st_size:.2f}× "
                  "the log")
            ingest_vs_goaccess.print_bytes(f"`{command}`", ingest_vs_goaccess.store_bytes(
                store / "hitboard.sqlite3"), log.stat().st_size, lines)
        shutil.rmtree(store, ignore_errors=True)


if __name__ == "__main__":
    main()
