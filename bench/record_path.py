"""The record path: hits per second a `HitRecorder` takes in memory (no flush), this
checkout against a baseline checkout, in alternating pairs of fresh processes.

    .venv/bin/python bench/record_path.py --baseline ../before [--pairs 5] [--hits 200000]

Each process records the same seeded hits (2 sites x 100 pages over one UTC day) three
times into one recorder and reports its best pass; the pairs alternate this checkout and
the baseline so that a machine's drift hits both. Prints each pair's figures and ratio,
and the median ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
ONE_PROCESS = """
import datetime as dt, random, sys, tempfile, time
import queries
hits, day = int(sys.argv[1]), dt.datetime(2026, 11, 21, tzinfo=dt.UTC)
rng = random.Random(1)
sample = [(f"site-{rng.randrange(2)}", f"/page-{rng.randrange(100)}.html",
           day + dt.timedelta(seconds=rng.randrange(86400))) for _ in range(hits)]
with tempfile.TemporaryDirectory() as store:
    recorder = queries.HitRecorder(queries.connect(store), flush_interval=3600,
                                   max_pending_docs=10 * hits)
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        for site, page, ts in sample:
            recorder.record(site, page, ts)
        best = min(best, time.perf_counter() - started)
    print(hits / best)
    recorder.close()
"""


def rate(checkout: Path, hits: int) -> float:
    """Hits per second recorded by a fresh process running ``checkout``'s code."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    out = subprocess.run([sys.executable, "-c", ONE_PROCESS, str(hits)], cwd=checkout,
                         env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True,
                        help="a checkout of the code to compare with")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--hits", type=int, default=200_000)
    args = parser.parse_args()
    ratios = []
    print(f"{'pair':>4} {'this (hits/s)':>14} {'baseline':>10} {'ratio':>6}")
    for pair in range(1, args.pairs + 1):
        mine, theirs = rate(HERE, args.hits), rate(args.baseline.resolve(), args.hits)
        ratios.append(mine / theirs)
        print(f"{pair:>4} {mine:>14,.0f} {theirs:>10,.0f} {ratios[-1]:>6.2f}")
    print(f"median ratio (this / {args.baseline}): {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
