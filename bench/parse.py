"""Access-log parsing speed: lines/s of LineParser on the real Apache log, repeated.

Usage: .venv/bin/python bench/parse.py [LOG] [--repeat N]
GoAccess's FAQ claims 51,000-100,000 lines/s (in C); the target here is >= 100,000.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

from queries.ingest.logformat import LineParser, LogRecord

DEFAULT_LOG = Path(__file__).resolve().parents[2] / "shared" / "data" / "apache_combined_2015.log"
TARGET = 100_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", nargs="?", default=str(DEFAULT_LOG))
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5, help="best of this many rounds")
    args = parser.parse_args()
    with open(args.log, "rb") as handle:
        lines = [raw.decode("utf-8", "replace") for raw in handle]
    lines *= args.repeat
    best, outcome = float("inf"), Counter()
    for _ in range(args.rounds):
        log_parser = LineParser("auto")   # a fresh time cache every round
        outcome.clear()
        started = time.perf_counter()
        for line in lines:
            result = log_parser.parse(line)
            outcome["parsed" if isinstance(result, LogRecord) else str(result)] += 1
        best = min(best, time.perf_counter() - started)
    rate = len(lines) / best
    print(f"lines: {len(lines):,} ({args.repeat} x {args.log})")
    print(f"outcome: {dict(outcome)}; odd request lines parsed: {dict(log_parser.tolerated)}")
    print(f"best of {args.rounds}: {best:.3f} s, {rate:,.0f} lines/s")
    print(f"vs target {TARGET:,} lines/s: {rate / TARGET:.2f}x; "
          f"vs GoAccess's 51,000-100,000 lines/s (C): {rate / 51_000:.2f}x-{rate / 100_000:.2f}x")


if __name__ == "__main__":
    main()
