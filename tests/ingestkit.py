"""A fixed-width access log and the reads of what an ingest stored, shared by the tests
that stop, kill or crash `hitboard ingest` (test_ingest_faults.py, test_ingest_crash.py)."""

from __future__ import annotations

import datetime as dt
import os
import sys
from collections import Counter
from pathlib import Path

from click.testing import CliRunner
from fakes import stored_count
from faultkit import counted

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
