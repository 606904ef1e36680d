"""Benchmark logs: the shared access log repeated as is or in time order, and a seeded
long-tail log.

``repeated`` copies the log until it holds ``lines`` lines: the same days over and over
(the GoAccess comparison's first file). ``shifted`` moves each copy later by the log's
span (whole days), so the file runs forward in time as a real log does: every copy adds
new days, hence new counter documents and rollup buckets, where ``repeated`` keeps adding
to the same ones. ``longtail`` draws a site's log from a seed: tens of thousands of pages
ranked by Zipf, ~100,000 clients, browsers, crawlers and referrers as a real site has
them, months in time order (its docstring says how).

Each is also a command, which the benchmarks print to name their inputs::

    python bench/logs.py shifted --lines 2000000 OUT [--source LOG]
    python bench/logs.py longtail --lines 1000000 OUT [--seed 31]
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
from pathlib import Path

try:
    from longtail import longtail  # run as a script: this folder is on sys.path
except ModuleNotFoundError:
    from bench.longtail import longtail  # imported as bench.logs (event_reads.py...)

STAMP = re.compile(rb"\[(\d{2}/[A-Z][a-z]{2}/\d{4}):")
SHARED_LOG = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / \
    "apache_combined_2015.log"
KINDS = ("repeated", "shifted", "longtail")
SEED = 31


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
            moved: dict[bytes, bytes] = {}      # a date as written -> its copy's

            def later(m: re.Match, shift=shift, moved=moved) -> bytes:
                found = moved.get(m.group(0))
                if found is None:
                    found = moved[m.group(0)] = b"[" + (_day(m) + shift).strftime(
                        "%d/%b/%Y").encode() + b":"
                return found

            for line in data[:lines - written]:
                out.write(STAMP.sub(later, line, count=1))
            written += min(len(data), lines - written)
            copy += 1
    return written


def _day(match: re.Match) -> dt.date:
    return dt.datetime.strptime(match.group(1).decode(), "%d/%b/%Y").date()


def make(kind: str, lines: int, target: Path, source: Path = SHARED_LOG,
         seed: int = SEED) -> int:
    """The log ``kind`` (one of ``KINDS``) of ``lines`` lines, written to ``target``."""
    if kind == "longtail":
        return longtail(lines, target, seed)
    return (shifted if kind == "shifted" else repeated)(source, lines, target)


def command(kind: str, lines: int, source: Path = SHARED_LOG, seed: int = SEED) -> str:
    """The command that makes that log (``OUT`` for its file)."""
    text = f"python bench/logs.py {kind} --lines {lines} OUT"
    if kind == "longtail":
        return text + (f" --seed {seed}" if seed != SEED else "")
    return text + (f" --source {source}" if source.resolve() != SHARED_LOG else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=KINDS)
    parser.add_argument("target", type=Path)
    parser.add_argument("--lines", type=int, required=True)
    parser.add_argument("--source", type=Path, default=SHARED_LOG,
                        help="the log repeated or shifted (default: the shared log)")
    parser.add_argument("--seed", type=int, default=SEED, help="longtail's seed")
    args = parser.parse_args()
    written = make(args.kind, args.lines, args.target, args.source, args.seed)
    print(f"{written:,} lines written to {args.target}")


if __name__ == "__main__":
    main()
