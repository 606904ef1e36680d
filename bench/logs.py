"""Benchmark logs made from one access log: repeated as is, or repeated in time order.

``repeated`` copies the log until it holds ``lines`` lines: the same days over and over
(the GoAccess comparison's file). ``shifted`` moves each copy later by the log's span
(whole days), so the file runs forward in time as a real log does: every copy adds new
days, hence new counter documents and rollup buckets, where ``repeated`` keeps adding to
the same ones.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

STAMP = re.compile(rb"\[(\d{2}/[A-Z][a-z]{2}/\d{4}):")


def repeated(source: Path, lines: int, target: Path) -> int:
    data = source.read_bytes().splitlines(keepends=True)
    written = 0
    with target.open("wb") as out:
        while written < lines:
            chunk = data[:lines - written]
            out.writelines(chunk)
            written += len(chunk)
    return written


def shifted(source: Path, lines: int, target: Path) -> int:
    """``lines`` lines of ``source`` repeated, copy ``k`` dated ``k`` spans later."""
    data = source.read_bytes().splitlines(keepends=True)
    days = [_day(m) for line in data if (m := STAMP.search(line))]
    span = (max(days) - min(days)).days + 1 if days else 1
    written = copy = 0
    with target.open("wb") as out:
        while written < lines:
            shift = dt.timedelta(days=span * copy)
            for line in data[:lines - written]:
                out.write(STAMP.sub(lambda m, s=shift: b"[" + (_day(m) + s).strftime(
                    "%d/%b/%Y").encode() + b":", line, count=1))
            written += min(len(data), lines - written)
            copy += 1
    return written


def _day(match: re.Match) -> dt.date:
    return dt.datetime.strptime(match.group(1).decode(), "%d/%b/%Y").date()
