"""A ZIP of Plausible's CSV layout read whole before anything is written, so a bad
archive changes nothing: every member is a file of the layout at the top of the
archive, every row parses, and no more than ``MAX_UNPACKED`` bytes come out of it.

Columns are found by their header name (Plausible's order varies between versions;
columns the layout does not name are ignored, those it requires must be there).
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import itertools
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import BinaryIO

from ..errors import HitboardError
from ..validation import has_control
from .layout import TABLES, Table, parse_name

MAX_UNPACKED = 1 << 30          # bytes, all members together
MAX_TEXT = 2_048                # characters of a text cell
MAX_LINE = 65_536               # characters of a line
MAX_MEMBERS = 1_000             # files in an archive (Plausible's has ten)
MAX_COUNT = 2 ** 53             # a count any JSON reader holds exactly
_CHUNK = 1 << 20
FORMULA = ("=", "+", "-", "@", "\t", "\r")     # what an export quotes (``exports.archive``)


class ImportRefusedError(HitboardError):
    """An archive refused whole: what, where (file and line)."""


@dataclass
class Archive:
    """What an archive holds: per day (``YYYYMMDD``) and table, per key its counts."""

    sha256: str
    first: str = "99991231"
    last: str = "00000000"
    days: dict[str, dict[str, dict[tuple, list[int]]]] = field(default_factory=dict)
    tables: set[str] = field(default_factory=set)

    def covers(self, first: str, last: str) -> None:
        self.first, self.last = min(self.first, first), max(self.last, last)


def read(source: str | BinaryIO) -> Archive:
    """The archive at ``source`` (a path or a binary file), checked whole."""
    digest = hashlib.sha256()
    with _opened(source) as raw:
        for block in iter(lambda: raw.read(_CHUNK), b""):
            digest.update(block)
        raw.seek(0)
        try:
            zipped = zipfile.ZipFile(raw)
        except (zipfile.BadZipFile, OSError) as exc:
            raise ImportRefusedError(f"not a ZIP archive ({exc})") from None
        with zipped:
            return _read(zipped, Archive(digest.hexdigest()))


def _opened(source):
    """A path opened, or the caller's file used without being closed."""
    return open(source, "rb") if isinstance(source, str) else nullcontext(source)


def _read(zipped: zipfile.ZipFile, found: Archive) -> Archive:
    members = zipped.infolist()
    if len(members) > MAX_MEMBERS:
        raise ImportRefusedError(f"the archive holds {len(members):,} files, at most "
                                 f"{MAX_MEMBERS:,}")
    declared = sum(info.file_size for info in members)
    if declared > MAX_UNPACKED:
        raise ImportRefusedError(f"the archive unpacks to {declared:,} bytes, over the "
                                 f"limit of {MAX_UNPACKED:,} (1 GiB)")
    budget = [MAX_UNPACKED]
    for info in members:
        if info.is_dir():
            raise ImportRefusedError(f"{info.filename!r}: the layout has no folders")
        named = _member(info.filename)
        table, first, last = named
        found.covers(first, last)
        found.tables.add(table.name)
        try:
            with zipped.open(info) as member:
                _rows(info.filename, table, first, last,
                      _limited(member, budget, info.filename), found)
        except (zipfile.BadZipFile, RuntimeError, NotImplementedError, EOFError,
                zlib.error) as exc:       # a bad CRC, encryption, an unknown compression
            raise ImportRefusedError(f"{info.filename}: cannot be unpacked ({exc})") from None
    if not found.tables:
        raise ImportRefusedError("the archive holds no file of Plausible's CSV layout")
    return found


def _member(name: str) -> tuple[Table, str, str]:
    if name.startswith(("/", "\\")) or "\\" in name or ".." in name.split("/") or ":" in name:
        raise ImportRefusedError(f"{name!r}: a path leaving the archive")
    named = parse_name(name) if "/" not in name else None
    if named is None:
        raise ImportRefusedError(
            f"{name!r}: an unknown file (expected imported_TABLE_YYYYMMDD_YYYYMMDD.csv "
            f"at the top of the archive, TABLE one of {', '.join(TABLES)})")
    table, first, last = named
    for day in (first, last):
        _day(day, name, 0)
    if first > last:
        raise ImportRefusedError(f"{name!r}: its first day comes after its last")
    return named


def _limited(member, budget: list[int], name: str = "") -> Iterator[str]:
    """The member's lines, counting what really comes out (a header may lie), none
    longer than ``MAX_LINE`` (never held whole)."""
    text = io.TextIOWrapper(member, encoding="utf-8-sig", newline="")
    for number in itertools.count(1):
        line = text.readline(MAX_LINE + 1)
        if not line:
            return
        if len(line) > MAX_LINE:
            raise ImportRefusedError(f"{name}, line {number}: over {MAX_LINE:,} characters")
        budget[0] -= len(line.encode())
        if budget[0] < 0:
            raise ImportRefusedError(f"the archive unpacks to more than {MAX_UNPACKED:,} "
                                     "bytes (1 GiB)")
        yield line


def _rows(name: str, table: Table, first: str, last: str, lines: Iterator[str],
          found: Archive) -> None:
    reader = csv.reader(lines)
    try:
        header = next(reader)
    except StopIteration:
        raise ImportRefusedError(f"{name}: empty (no header line)") from None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise ImportRefusedError(f"{name}, line 1: {exc}") from None
    where = {column: i for i, column in enumerate(header) if column in table.columns}
    missing = [c for c in ("date", *table.required) if c not in where]
    if missing:
        raise ImportRefusedError(f"{name}: no column {', '.join(missing)} in its header")
    try:
        for row in reader:
            _row(name, reader.line_num, row, len(header), where, table, first, last, found)
    except (UnicodeDecodeError, csv.Error) as exc:
        raise ImportRefusedError(f"{name}, line {reader.line_num}: {exc}") from None


def _row(name: str, line: int, row: list[str], width: int, where: dict[str, int],
         table: Table, first: str, last: str, found: Archive) -> None:
    if not row:
        return
    if len(row) != width:
        raise ImportRefusedError(f"{name}, line {line}: {len(row)} cells, the header has "
                                 f"{width}")
    day = _day(row[where["date"]], name, line)
    if not first <= day <= last:
        raise ImportRefusedError(f"{name}, line {line}: {row[where['date']]} is outside "
                                 f"the file's days {first}-{last}")
    key = tuple(_text(row[where[c]], name, line, c) if c in where else ""
                for c in table.keys)
    counts = [_count(row[where[c]], name, line, c) if c in where else 0
              for c in table.counts]
    kept = found.days.setdefault(day, {}).setdefault(table.name, {})
    if key in kept:
        kept[key] = [a + b for a, b in zip(kept[key], counts, strict=True)]
    else:
        kept[key] = counts


def _day(text: str, name: str, line: int) -> str:
    try:
        day = (dt.date.fromisoformat(text) if "-" in text
               else dt.datetime.strptime(text, "%Y%m%d").date())
    except ValueError:
        at = f", line {line}" if line else ""
        raise ImportRefusedError(f"{name}{at}: {text[:40]!r} is not a date") from None
    return f"{day:%Y%m%d}"


def _text(value: str, name: str, line: int, column: str) -> str:
    """A text cell; the quote an export puts before a formula's first character, gone."""
    if len(value) > MAX_TEXT or has_control(value):
        raise ImportRefusedError(f"{name}, line {line}: {column} is over {MAX_TEXT:,} "
                                 "characters or holds a control character")
    return value[1:] if value[:1] == "'" and value[1:2] in FORMULA else value


def _count(value: str, name: str, line: int, column: str) -> int:
    if value == "":
        return 0
    if not value.isascii() or not value.isdigit() or int(value) > MAX_COUNT:
        raise ImportRefusedError(f"{name}, line {line}: {column} {value[:40]!r} is not a "
                                 "whole number from 0 to 2^53")
    return int(value)
