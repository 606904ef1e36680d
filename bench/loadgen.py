"""Load generator: target vs achieved rate on the embedded store, the maximum sustainable
rate, and how long backfills take.

Usage: .venv/bin/python bench/loadgen.py [--seconds S] [--sites N] [--pages N]

Each run drives the real threaded LoadRunner into a real HitRecorder (1 s flushes) on a
fresh embedded store, then closes the recorder: "written" counts the hits that reached the
documents. A rate is sustained when the hits generated and the achieved rate are within
5% of the target and the store keeps up (the recorder's backlog at stop, "close s", is
written within 2 s). The maximum is searched in steps of x4 (x2 with raw events) past the
generator's 20,000 hits/s ceiling until it fails; then the same rate over more pages shows
what does limit it: distinct pages per flush, not hits.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

# Run as a script, this folder comes first on sys.path and its dashboard.py (the viewers
# benchmark) would shadow the dashboard package: import from the project root instead.
sys.path[0] = str(Path(__file__).resolve().parents[1])

import queries  # noqa: E402
from queries.events.writer import EventWriter  # noqa: E402
from queries.loadgen import LoadRunner, TrafficModel, backfill_history  # noqa: E402
from queries.loadgen.events import EventFeed  # noqa: E402
from queries.status import as_dict  # noqa: E402

RATES = (100, 1_000, 10_000, 20_000)
SEARCH_LIMIT = 1_280_000
TOLERANCE = 0.05
MIN_HITS = 3_600
MAX_BACKLOG_S = 2.0
HEADER = (f"{'target/s':>10} {'achieved/s':>12} {'ratio':>8} {'written':>12} {'db ops/s':>9} "
          f"{'gen CPU':>8} {'close s':>9}")


def run(model: TrafficModel, rate: float, seconds: float, events: bool) -> dict:
    with tempfile.TemporaryDirectory() as store:
        db = queries.connect(store)
        queries.ensure_indexes(db)
        recorder = queries.HitRecorder(db)
        writer = EventWriter(db, flush_interval=1.0) if events else None
        runner = LoadRunner(recorder, model, rate, max_rate=max(rate, 20_000),
                            events=EventFeed(writer) if writer else None)
        started = time.perf_counter()
        runner.start()
        time.sleep(seconds)
        runner.stop()
        elapsed = time.perf_counter() - started
        recorder.close()
        if writer is not None:
            writer.close()
        flush = time.perf_counter() - started - elapsed
        stats = as_dict(recorder.status())
        db.client.close()
    events_ok = writer is None or (writer.totals.written == runner.hits_sent
                                   and not writer.totals.failed)
    return {"achieved": runner.hits_sent / elapsed, "sent": runner.hits_sent,
            "events_ok": events_ok,
            "expected": runner.expected_hits, "written": stats["hits_written"],
            "errors": runner.errors + stats["refused"], "busy": runner.busy_s / elapsed,
            "ops": stats["db_operations"] / elapsed, "flush": flush}


def report(model: TrafficModel, rate: float, seconds: float, show_rate: bool = True,
           events: bool = False) -> bool:
    # Poisson jitter: N expected hits vary by sqrt(N). MIN_HITS makes 5% three standard
    # deviations, so a miss means the generator fell short, not bad luck.
    r = run(model, rate, max(seconds, MIN_HITS / rate), events)
    ratio = r["sent"] / r["expected"]
    # Sustained: the hits were generated (ratio), the generator was not held back (achieved)
    # and the store kept up (everything written within a couple of flushes of stopping).
    ok = (abs(ratio - 1) <= TOLERANCE and abs(r["achieved"] / rate - 1) <= TOLERANCE
          and r["written"] == r["sent"] and not r["errors"] and r["events_ok"]
          and r["flush"] <= MAX_BACKLOG_S)
    print(f"{rate:>10,.0f}" if show_rate else "", end="")
    print(f" {r['achieved']:>12,.0f} {ratio:>8.3f} {r['written']:>12,} {r['ops']:>9,.0f} "
          f"{r['busy']:>8.1%} {r['flush']:>9.1f} {'ok' if ok else 'NOT SUSTAINED'}")
    return ok


def rates(model: TrafficModel, seconds: float, events: bool = False) -> None:
    print(f"\n{model.sites} sites x {model.pages} pages, {seconds:g} s per rate"
          + (", one raw event per hit" if events else ", hits only"))
    print(HEADER)
    for rate in RATES:
        if not report(model, rate, seconds, events=events):
            print(f"max sustainable (within {TOLERANCE:.0%}): below {rate:,} hits/s")
            return
    rate, best = RATES[-1], RATES[-1]
    while rate < SEARCH_LIMIT:
        rate *= 2 if events else 4
        if not report(model, rate, seconds, events=events):
            print(f"max sustainable (within {TOLERANCE:.0%}): {best:,} hits/s")
            return
        best = rate
    print(f"sustained up to {best:,} hits/s (the search stops there): the cost of a tick "
          "depends on the pages, not the rate")


def pages(rate: float, seconds: float) -> None:
    """What does limit the generator: distinct pages per flush, each one upsert per
    document, whatever the rate."""
    print(f"\nmore pages at {rate:,} hits/s, {seconds:g} s per run")
    print(f"{'pages':>10} " + HEADER[11:])
    for sites, per_site in ((2, 15), (5, 100), (10, 500)):
        print(f"{sites * per_site:>10,}", end="")
        report(TrafficModel(sites=sites, pages=per_site, diurnal=0.0), rate, seconds,
               show_rate=False)


def backfills() -> None:
    print("\nbackfill on the embedded store (mean rate 5 hits/s)")
    print(f"{'sites x pages':>14} {'days':>5} {'seconds':>8} {'hits':>14} {'writes':>8}")
    for sites, pages, days in ((2, 15, 30), (3, 20, 30), (2, 15, 400)):
        with tempfile.TemporaryDirectory() as store:
            db = queries.connect(store)
            queries.ensure_indexes(db)
            started = time.perf_counter()
            totals = backfill_history(db, TrafficModel(sites=sites, pages=pages), 5, days)
            elapsed = time.perf_counter() - started
            db.client.close()
        print(f"{f'{sites} x {pages}':>14} {days:>5} {elapsed:>8.1f} {totals.hits:>14,} "
              f"{totals.new_documents + totals.updated_documents:>8,}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each run")
    parser.add_argument("--sites", type=int, default=2)
    parser.add_argument("--pages", type=int, default=15)
    parser.add_argument("--no-backfill", action="store_true")
    args = parser.parse_args()
    model = TrafficModel(sites=args.sites, pages=args.pages, diurnal=0.0)
    rates(model, args.seconds)
    rates(model, args.seconds, events=True)
    pages(RATES[-1], args.seconds)
    if not args.no_backfill:
        backfills()


if __name__ == "__main__":
    main()
