"""The long search of ``scripts/simulate.sh``: schedules ``--first`` to ``--first +
--schedules`` run in ``--jobs`` processes (embedded store only), progress every
``--every`` schedules, each failing seed with its report's first lines, and a last line
"N schedules, M failed" (exit 1 if M > 0)."""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path


def one(seed: int) -> tuple[int, str]:
    logging.disable(logging.CRITICAL)
    from simrun import run

    with tempfile.TemporaryDirectory(prefix="hitboard-sim-") as tmp:
        outcome = run(seed, Path(tmp))
    return seed, outcome.report() if outcome.problems else ""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="scripts/simulate.sh")
    parser.add_argument("--schedules", type=int, default=2000)
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--every", type=int, default=100)
    args = parser.parse_args(argv)
    started, done, failed = time.monotonic(), 0, []
    seeds = range(args.first, args.first + args.schedules)
    with ProcessPoolExecutor(args.jobs) as pool:
        for seed, report in pool.map(one, seeds, chunksize=4):
            done += 1
            if report:
                failed.append(seed)
                print(f"FAILED seed {seed}:\n" + "\n".join(
                    "  " + line for line in report.splitlines()[-12:]), flush=True)
            if done % args.every == 0:
                print(f"{done}/{args.schedules} schedules, {len(failed)} failed, "
                      f"{time.monotonic() - started:.0f}s", flush=True)
    if failed:
        print("failed seeds: " + " ".join(map(str, failed)))
    print(f"{done} schedules, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
