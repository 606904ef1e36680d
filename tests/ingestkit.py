"""A fixed-width access log, the reads of what an ingest stored, and an ingest killed at a
step of its flush, shared by the tests that stop, kill or crash `hitboard ingest`
(test_ingest_faults.py, test_ingest_crash.py)."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

from click.testing import CliRunner
from fakes import stored_count
from faultkit import WAIT, counted

import queries
from dashboard.cli import main
from queries.stats import schema

HITBOARD = Path(sys.executable).with_name("hitboard")
START = dt.datetime(2026, 3, 14, 10, 0, tzinfo=dt.UTC)
PAGES = 7


def line(i: int) -> str:
    # Fixed width, so a byte offset tells how many lines lie before it.
    t = START + dt.timedelta(seconds=i)
    return (f'10.0.0.1 - - [{t:%d/%b/%Y:%H:%M:%S} +0000] "GET /p{i % PAGES} HTTP/1.1" '
            '200 5 "-" "ua"\n')


LINE = len(line(0))


def append(path: Path, start: int, stop: int) -> None:
    with path.open("a") as log:
        log.writelines(line(i) for i in range(start, stop))


def sent(lines: int) -> Counter:
    return Counter({f"/p{p}": len(range(p, lines, PAGES)) for p in range(PAGES)})


def read_position(pid: int, log: Path) -> int:
    """How far process ``pid`` has read ``log`` (Linux: its descriptor's offset)."""
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            if Path(os.readlink(fd)) == log:
                info = Path(f"/proc/{pid}/fdinfo/{fd.name}").read_text()
                return int(info.split("pos:")[1].split()[0])
        except (OSError, IndexError):
            continue
    return 0


def checkpoint(db) -> dict:
    return db[schema.CHECKPOINTS].find_one({"_id": {"$regex": "^ingest:"}}) or {}


def saved_offset(db) -> int:
    position = checkpoint(db).get("position")
    return position["offset"] if position else 0


def ingest_cli(*args: str):
    return CliRunner().invoke(main, ["ingest", *args])


def stored_counts(store: str) -> tuple[Counter, Counter, int]:
    db = queries.connect(store, read_only=True)
    try:
        daily, monthly = counted(db, "logs")
        return daily, monthly, stored_count(db, "logs")
    finally:
        db.client.close()


# `hitboard ingest` with small batches (a flush every 500 lines: a small file takes
# several), armed to halt at the ``nth`` time it reaches ``step``
# (``queries.processes.halt_point``); argv: step, nth, then the CLI's.
SMALL_RUN = textwrap.dedent("""
    import sys
    from dashboard.cli import main
    from queries import processes
    from queries.ingest import chunks
    from queries.ingest import run as ingest
    ingest.BATCH_LINES = ingest.FOLLOW_BATCH_LINES = 500
    chunks.CHUNK_BYTES = 250 * LINE_BYTES       # two chunks a batch
    step, nth, *argv = sys.argv[1:]
    processes.halt_at(step, int(nth))
    main(argv)
""").replace("LINE_BYTES", str(LINE))


@contextmanager
def halted_at(step: str, nth: int, *args: str, env: dict | None = None):
    """Run ``hitboard ingest *args`` (SMALL_RUN) in a process group of its own until it
    stops itself at the ``nth`` ``step`` of its run, and yield it there, stopped; fails
    if it ended without reaching that step. On leaving, it is killed if still running;
    ``errors(process)`` reads what it wrote on stderr."""
    with tempfile.TemporaryFile() as err:
        process = subprocess.Popen(
            [sys.executable, "-c", SMALL_RUN, step, str(nth), "ingest", *args],
            stdout=subprocess.DEVNULL, stderr=err, env=env, start_new_session=True)
        process.stderr = err      # a file, not a pipe: a stopped run never blocks on it
        try:
            watchdog = threading.Timer(4 * WAIT, process.kill)   # a limit: a run that hangs
            watchdog.start()
            try:
                state = os.waitid(os.P_PID, process.pid,
                                  os.WEXITED | os.WSTOPPED | os.WNOWAIT)
            finally:
                watchdog.cancel()
            assert state.si_code == os.CLD_STOPPED, \
                f"ingest ended before {step} #{nth}: {errors(process)}"
            yield process
        finally:
            process.kill()
            process.wait()


def errors(process: subprocess.Popen) -> str:
    """What a ``halted_at`` process wrote on stderr so far."""
    process.stderr.seek(0)
    return process.stderr.read().decode(errors="replace")


def kill_at(step: str, nth: int, *args: str, env: dict | None = None) -> None:
    """``halted_at``, then SIGKILL there (a power loss)."""
    with halted_at(step, nth, *args, env=env) as process:
        process.kill()
