"""A year's reads on a big store made from a time-ordered log:
warm and cold, against 300 ms warm and 1 s cold.

    .venv/bin/python bench/year_reads.py --dir DIR [--lines 2000000] [--runs 5]

DIR keeps the store between runs: when it holds none, the bench makes the log with
``bench/logs.py shifted --lines LINES`` (the shared log, each copy 4 days later: 2,000,000
lines run 800 days) and ingests it with ``hitboard ingest LOG --site real``, printing both
commands and the ingest's time. A store without goals then gets custom events (``goals``:
one human pageview in 50 followed by a signup, a third of them paid, or a download, as
the beacon keeps them) and three goals, counted by a rollup run. Then, over the 365 days
that end with the store's last day (UTC), each read as the dashboard and the CLI make it:

- History's 12-month daily chart (``queries.reads.history.chart``), its KPIs
  (``figures``: hits, visitors, error rate; ``visit_figures``: visits, bounce rate...),
  the entry and exit pages, the Goals panel, the chart of visits, its status and referrer panels
  (``dimensions.reads.breakdown``, people), the top pages (``queries.top_pages``), and the
  year by week from the rollups (``rollups.reads.rollup_series``);
- ``warm``: the median of ``--runs`` calls in one process after a first one;
- ``cold``: a fresh interpreter per read (the OS page cache warm): the read's own
  seconds, and the whole process's (imports, opening the store, the read);
- the CLI as a user runs it, whole process: ``hitboard top``, ``hitboard report
  --source rollup --granularity week``, ``hitboard breakdown --by referrer``;
- ``hitboard serve`` on the store: its worker's RSS once headless Chromium has opened
  History's 12 months and Live (``bench/bigstore.py``'s measure; goal ≤ 300 MB).
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchkit import load

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
SITE = "real"
WARM_MS, COLD_S = 300, 1.0


def _year(db) -> tuple[dt.datetime, dt.datetime]:
    """The 365 UTC days ending with the store's last day of hits."""
    import queries

    _, last = queries.site_span(db, SITE)
    end = dt.datetime.combine(last.date() + dt.timedelta(days=1), dt.time(), dt.UTC)
    return end - dt.timedelta(days=365), end


def _reads() -> dict:
    """Name -> read(db, start, end), each as its caller makes it."""
    import queries
    from queries.dimensions import reads as dims
    from queries.reads.history import (
        chart,
        figures,
        goal_figures,
        visit_chart,
        visit_figures,
        visit_pages,
    )
    from queries.rollups.reads import rollup_series

    def kpis(db, start, end):
        hits = int(chart(db, SITE, start, end, "day").frame.sum().sum())
        return figures(db, SITE, start, end, hits)

    return {
        "History chart, 12 months by day": lambda db, s, e: chart(db, SITE, s, e, "day"),
        "History KPIs (hits, visitors, errors)": kpis,
        "status panel (people)": lambda db, s, e: dims.breakdown(
            db, SITE, "status", s, e, n=10, humans=True),
        "referrer panel (people)": lambda db, s, e: dims.breakdown(
            db, SITE, "referrer", s, e, n=10, humans=True),
        "top pages": lambda db, s, e: queries.top_pages(db, SITE, s, e, 10),
        "year by week (rollups)": lambda db, s, e: rollup_series(db, SITE, s, e, "week"),
        "History visit KPIs (visits, bounce, duration...)": lambda db, s, e: visit_figures(
            db, SITE, s, e),
        "entry and exit pages": lambda db, s, e: visit_pages(db, SITE, s, e, 10),
        "Goals panel (2 events, 1 page goal)": lambda db, s, e: goal_figures(
            db, SITE, s, e),
        "History chart of visits, 12 months by day": lambda db, s, e: visit_chart(
            db, SITE, s, e, "day", "visits"),
    }


def one(store: str, name: str) -> None:
    """The cold run's child: open the store, read once, print the read's seconds."""
    import queries

    db = queries.connect(store, read_only=True)
    start, end = _year(db)
    began = time.perf_counter()
    _reads()[name](db, start, end)
    print(f"{time.perf_counter() - began:.4f}")


def warm(store: str, runs: int) -> dict[str, tuple[float, float]]:
    """Name -> (first call's seconds, median of ``runs`` calls after it), one process."""
    import queries

    db = queries.connect(store, read_only=True)
    start, end = _year(db)
    found = {}
    for name, read in _reads().items():
        began = time.perf_counter()
        read(db, start, end)
        first = time.perf_counter() - began
        times = []
        for _ in range(runs):
            began = time.perf_counter()
            read(db, start, end)
            times.append(time.perf_counter() - began)
        found[name] = first, statistics.median(times)
    return found


def cold(store: str, name: str) -> tuple[float, float]:
    """(the read's seconds, the whole process's) in a fresh interpreter."""
    began = time.perf_counter()
    out = subprocess.run([sys.executable, __file__, "--one", name, "--dir", store],
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1]), time.perf_counter() - began


def cli(args: list[str]) -> float:
    began = time.perf_counter()
    subprocess.run([str(BIN / "hitboard"), *args], capture_output=True, check=True)
    return time.perf_counter() - began


def build(directory: Path, lines: int) -> Path:
    store = directory / "store"
    if (store / "hitboard.sqlite3").exists():
        print(f"store: {store} (kept from an earlier run)")
        return store
    directory.mkdir(parents=True, exist_ok=True)
    log = directory / "shifted.log"
    make = [sys.executable, str(HERE / "logs.py"), "shifted", str(log), "--lines", str(lines)]
    ingest = [str(BIN / "hitboard"), "ingest", str(log), "--site", SITE, "--store", str(store)]
    print("$", " ".join(make))
    subprocess.run(make, check=True)
    print("$", " ".join(ingest))
    began = time.perf_counter()
    subprocess.run(ingest, check=True, stdout=subprocess.DEVNULL)
    print(f"ingest: {time.perf_counter() - began:.1f} s")
    return store


def goals(store: Path) -> None:
    """Custom events beside the kept pageviews, and goals, once (see the module doc)."""
    import queries
    from queries.events import custom
    from queries.events import reads as event_reads
    from queries.rollups.build import run_rollups
    from queries.stats.goals import goal
    from queries.stats.sites import add_goal, site_settings
    from queries.visits.build import pageviews

    db = queries.connect(str(store))
    try:
        if site_settings(db, SITE).goals:
            return
        began = time.perf_counter()
        bounds = event_reads.span(db, SITE)
        writer, n = custom.writer(db, batch_size=5000), 0
        day = dt.timedelta(days=1)
        lo = bounds[0]
        while lo < bounds[1]:
            ms = (queries.stats.schema.epoch_ms(lo), queries.stats.schema.epoch_ms(lo + day))
            for i, view in enumerate(pageviews(db, SITE, *ms, False)):
                if i % 50:
                    continue
                paid = ("EUR", "49.00") if i % 150 == 0 else None
                name = "Signup" if i % 100 == 0 else "Download"
                writer.add(custom.document(
                    queries.stats.schema.from_epoch_ms(view.time + 20_000), SITE, view.page,
                    (name, (("plan", "pro" if paid else "free"),), paid),
                    *view.visitor.split("\x00", 1)))
                n += 1
            lo += day
        writer.flush()
        for kind, value in (("event", "Signup"), ("event", "Download"),
                            ("page", "/projects/**")):
            add_goal(db, SITE, goal(kind, value))
        run_rollups(db)
        print(f"goals: {n:,} custom events and 3 goals, counted in "
              f"{time.perf_counter() - began:.1f} s")
    finally:
        db.client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--lines", type=int, default=2_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one(str(args.dir), args.one)
        return
    store = str(build(args.dir, args.lines))
    goals(Path(store))
    import queries

    db = queries.connect(store, read_only=True)
    start, end = _year(db)
    db.client.close()
    print(f"reads over {start:%Y-%m-%d} .. {end:%Y-%m-%d} (365 days), site {SITE}\n")
    print(f"{'read':<40}{'first':>8}{'warm':>8}{'cold read':>11}{'cold process':>14}  "
          f"goal (warm {WARM_MS} ms, cold {COLD_S:.0f} s)")
    for name, (first, median) in warm(store, args.runs).items():
        read_s, process_s = cold(store, name)
        met = "met" if median * 1000 <= WARM_MS and read_s <= COLD_S else "MISSED"
        print(f"{name:<40}{first * 1000:>6.0f}ms{median * 1000:>6.0f}ms{read_s:>9.2f} s"
              f"{process_s:>12.2f} s  {met}")
    span = ["--start", f"{start:%Y-%m-%d}", "--end", f"{end:%Y-%m-%d}", "--store", store]
    print("\nthe CLI, whole process (interpreter start and imports included):")
    for args_ in (["top", "--site", SITE, *span],
                  ["report", "--site", SITE, "--granularity", "week", "--source", "rollup",
                   *span],
                  ["breakdown", "--site", SITE, "--by", "referrer", *span]):
        print(f"  hitboard {' '.join(args_[:5]):<58}{cli(args_):>6.2f} s")
    print(f"  hitboard --version{'':<49}{cli(['--version']):>6.2f} s  (start-up alone)")
    bigstore = load("bigstore", HERE / "bigstore.py")
    served = bigstore.serve(Path(store), SITE)
    print(f"\nhitboard serve: first page {served['first_page_s']:.2f} s; worker RSS after "
          f"History 12 months and Live {served['rss_mb']:.0f} MB (goal 300 MB)"
          + (f"; browsing skipped: {served['browse_skipped']}" if served["browse_skipped"]
             else ""))


if __name__ == "__main__":
    main()
