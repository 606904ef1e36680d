"""Backfill rate as the store grows: does a year cost 365 times a day?

    .venv/bin/python bench/backfill.py [--days 60] [--sites 2] [--pages 500] [--rate 200]
                                       [--dir DIR] [--every 10] [--skip-stats]
                                       [--skip-dimensions]

Runs what `hitboard loadgen --backfill-days DAYS --duration 0` runs (stats documents,
their rollups, then the dimensions and visitor sketches) on a fresh embedded store and
prints, every ``--every`` site-days, the stats documents written so far and the rate of
the last stretch, in wall and CPU seconds (CPU: this process's, so another job on the
machine changes it less); then the same for the dimension phase (per flushes: one a
site-day, and the recorder's own each second), and the totals of each phase. A steady
rate is flat rows; a rate falling with the documents written is a cost that grows with
the store.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import tempfile
import time
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parents[1])

import queries  # noqa: E402
from queries.counting import DimensionRecorder  # noqa: E402
from queries.loadgen import TrafficModel  # noqa: E402
from queries.loadgen.history import backfill_dimensions, history  # noqa: E402
from queries.rollups import build  # noqa: E402

NOW = dt.datetime(2026, 11, 21, 12, 0, tzinfo=dt.UTC)


class Meter:
    """Wall and CPU time between rows, and the units (documents, site-days) done."""

    def __init__(self, label: str, unit: str, steps: str = "site-days"):
        self.label, self.unit = label, unit
        self.start = self.last = (time.perf_counter(), time.process_time(), 0)
        print(f"\n{label}: {steps:>9} {unit:>9} {'wall s':>8} {'CPU s':>8} "
              f"{unit + '/s':>10} {unit + '/CPU s':>12}")

    def row(self, site_days: int, done: int) -> None:
        now = (time.perf_counter(), time.process_time(), done)
        wall, cpu, units = (now[i] - self.last[i] for i in range(3))
        print(f"{'':{len(self.label) + 1}} {site_days:>9,} {done:>9,} {wall:>8.2f} {cpu:>8.2f} "
              f"{units / wall if wall else 0:>10,.0f} {units / cpu if cpu else 0:>12,.0f}",
              flush=True)
        self.last = now

    def total(self) -> tuple[float, float]:
        return time.perf_counter() - self.start[0], time.process_time() - self.start[1]


def stats_phase(db, model: TrafficModel, args) -> None:
    meter = Meter("stats", "docs")
    pages_per_day = args.pages + 1
    shown = [0]

    def progress(done, _total):
        if done - shown[0] >= args.every:
            meter.row(done, done * pages_per_day)
            shown[0] = done

    roll_hours, rolled = build.roll_hours, []

    def timed_roll_hours(*a, **k):
        started = time.perf_counter(), time.process_time()
        roll_hours(*a, **k)
        rolled.append((time.perf_counter() - started[0], time.process_time() - started[1]))

    build.roll_hours = timed_roll_hours
    try:
        totals = queries.backfill(db, history(model, args.rate, args.days, NOW),
                                  progress=progress)
    finally:
        build.roll_hours = roll_hours
    wall, cpu = meter.total()
    roll_wall, roll_cpu = (sum(t[i] for t in rolled) for i in range(2))
    print(f"stats: {totals.new_documents + totals.updated_documents:,} stats writes, "
          f"{totals.rollup_documents:,} rollup documents, {wall:.1f} s wall, {cpu:.1f} s "
          f"CPU, of which rollups ({len(rolled)} calls) {roll_wall:.1f} s wall, "
          f"{roll_cpu:.1f} s CPU")


def dimensions_phase(db, model: TrafficModel, args) -> None:
    meter = Meter("dims", "hits", "flushes")   # a site-day's, and the recorder's own
    counted = [0, 0]
    with DimensionRecorder(db) as dimensions:
        flush = dimensions.flush

        def timed_flush(*a, **k):
            result = flush(*a, **k)
            counted[0] += 1
            if counted[0] % args.every == 0:
                meter.row(counted[0], counted[1])
            return result

        dimensions.flush = timed_flush
        original = dimensions.add_pending

        def counting_add_pending(units):
            counted[1] += sum(map(dimensions.counts.hits, units.values()))
            original(units)

        dimensions.add_pending = counting_add_pending
        hits = backfill_dimensions(dimensions, model, args.rate, args.days, NOW)
    wall, cpu = meter.total()
    print(f"dimensions: {hits:,} hits, {wall:.1f} s wall, {cpu:.1f} s CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=60)
    parser.add_argument("--sites", type=int, default=2)
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--every", type=int, default=10, help="site-days between rows")
    parser.add_argument("--dir", help="store directory (default: a temporary one)")
    parser.add_argument("--skip-dimensions", action="store_true")
    parser.add_argument("--skip-stats", action="store_true")
    args = parser.parse_args()
    model = TrafficModel(sites=args.sites, pages=args.pages, seed=0)
    with tempfile.TemporaryDirectory(dir=args.dir) as store:
        db = queries.connect(store)
        queries.ensure_indexes(db)
        queries.register_synthetic(db, model.site_names)
        print(f"{args.days} days + today × {args.sites} sites × {args.pages} pages, "
              f"rate {args.rate:g}/s, store {store}")
        started = time.perf_counter(), time.process_time()
        if not args.skip_stats:
            stats_phase(db, model, args)
        if not args.skip_dimensions:
            dimensions_phase(db, model, args)
        print(f"\nall: {time.perf_counter() - started[0]:.1f} s wall, "
              f"{time.process_time() - started[1]:.1f} s CPU; store "
              f"{sum(f.stat().st_size for f in Path(store).iterdir()) / 1e9:.2f} GB")
        db.client.close()


if __name__ == "__main__":
    main()
