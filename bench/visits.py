"""What visits cost an ingest, and how fast History reads them.

    .venv/bin/python bench/visits.py [--lines 200000] [--kind shifted] [--rounds 3]

1. **Ingest**: ``hitboard ingest`` of the same log into a fresh store, in turn with
   visits (as shipped) and without them (the baseline: the same command with the
   visits' recompute replaced by nothing), ``--rounds`` pairs; medians and the ratio.
2. **Recompute**: the visits of every hour of the log recomputed again, in process.
3. **Reads**: the figures History reads for the whole log's span and for a year of it
   (the log's days repeated over a year of a second site), cold and warm.

Logs come from ``bench/logs.py`` (its command is printed).
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import queries  # noqa: E402
from bench import logs  # noqa: E402
from queries.events import reads as event_reads  # noqa: E402
from queries.visits import build, reads  # noqa: E402

WITHOUT = ("import queries.visits.build as b; b.recompute = lambda db, touched: 0; "
           "from dashboard.cli import main; main()")
WITH = "from dashboard.cli import main; main()"


def ingest(log: Path, store: Path, code: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, "ingest", str(log), "--site", "s",
                    "--store", str(store)], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def timed(fn, *args) -> tuple[float, object]:
    started = time.perf_counter()
    found = fn(*args)
    return time.perf_counter() - started, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--kind", choices=logs.KINDS, default="shifted")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "access.log"
        logs.make(args.kind, args.lines, log)
        print(f"log: {logs.command(args.kind, args.lines)} ({args.lines:,} lines)")
        times: dict[str, list[float]] = {"with visits": [], "without (baseline)": []}
        for round_ in range(args.rounds):
            for name, code in (("without (baseline)", WITHOUT), ("with visits", WITH)):
                store = Path(folder) / f"store-{round_}-{name.split()[0]}"
                times[name].append(ingest(log, store, code))
        medians = {name: statistics.median(found) for name, found in times.items()}
        for name, found in times.items():
            print(f"ingest {name:<20} median {medians[name]:6.2f} s  "
                  f"({', '.join(f'{t:.2f}' for t in found)})")
        print(f"ratio with/without: {medians['with visits'] / medians['without (baseline)']:.3f}")

        db = queries.connect(str(store))          # the last one, with visits
        touched = event_reads.touched_hours(db, dt.datetime(1970, 1, 1, tzinfo=dt.UTC))
        hours = sum(len(h) for h in touched.values())
        spent, days = timed(build.recompute, db, touched)
        print(f"recompute {hours:,} hours ({days} day documents): {spent:.2f} s")
        first, last = event_reads.span(db, "s")
        for label in ("cold", "warm"):
            spent, totals = timed(reads.totals, db, "s", first, last)
            print(f"totals over {(last - first).days} days ({label}): {1000 * spent:.0f} ms "
                  f"({totals.visits:,} visits)")
        for granularity in ("day", "week", "month"):
            spent, frame = timed(reads.series, db, "s", first, last, granularity, "UTC")
            print(f"series per {granularity}: {1000 * spent:.0f} ms ({len(frame)} buckets)")
        spent, frame = timed(reads.pages, db, "s", first, last, "entry", 10)
        print(f"entry pages: {1000 * spent:.0f} ms")


if __name__ == "__main__":
    main()
