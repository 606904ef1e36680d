"""Reads of raw events, this version against a baseline checkout, on the same log.

Usage: .venv/bin/python bench/event_reads.py --baseline BEFORE [--lines 500000]

Each version ingests the shared log repeated to ``--lines`` lines (``bench/logs.py``)
into its own embedded store with its own ``hitboard ingest``, then times, best of 3,
in a process of its own (``--worker``), what the pages read from raw events: a History
filter over the 4 days (every panel), one page's breakdown (the top page and the 10th),
Live's last-hour breakdown, count and active visitors, and the recent-hits feed (newest
100 of the top 10 pages, and of the whole site). BEFORE is a checkout of the version to
compare with (its ``.venv`` or this one's Python runs it).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)   # as in bench/loadgen.py: this folder's dashboard.py would shadow

from bench import logs  # noqa: E402

LOG = ROOT.parent / "shared" / "data" / "apache_combined_2015.log"
SITE = "bench"
START, END = dt.datetime(2015, 5, 17, tzinfo=dt.UTC), dt.datetime(2015, 5, 21, tzinfo=dt.UTC)
HOUR = dt.datetime(2015, 5, 18, 14, tzinfo=dt.UTC)


def reads(store: str) -> dict[str, float]:
    """Each read's best of 3, in ms (runs in the version's own process)."""
    import queries
    from queries.dimensions import page_reads
    from queries.events.recent import recent_hits
    from queries.reads.filtered import filtered_breakdowns

    db = queries.connect(store, read_only=True)
    pages = list(queries.top_pages(db, SITE, START, END, n=10).index)
    hour = (HOUR, HOUR + dt.timedelta(hours=1))
    cases = {
        "History filter, 4 days, every panel": lambda: filtered_breakdowns(
            db, SITE, "referrer", "(direct)", START, END, ("browser", "country", "status")),
        "one page's breakdown, the top page, 4 days": lambda: page_reads.page_breakdown(
            db, SITE, pages[0], "referrer", START, END),
        "one page's breakdown, the 10th page, 4 days": lambda: page_reads.page_breakdown(
            db, SITE, pages[9], "referrer", START, END),
        "Live: last hour's referrers": lambda: page_reads.events_breakdown(
            db, SITE, "referrer", *hour),
        "Live: last hour's count": lambda: page_reads.count_events(db, SITE, *hour),
        "Live: active visitors, 5 minutes": lambda: page_reads.active_visitors(
            db, SITE, HOUR, 5),
        "feed: newest 100 of the top 10 pages": lambda: recent_hits(db, SITE, pages, 100),
        "feed: newest 100 of the site": lambda: recent_hits(db, SITE, None, 100),
    }
    out = {}
    for name, read in cases.items():
        times = []
        for _ in range(3):
            started = time.perf_counter()
            read()
            times.append(time.perf_counter() - started)
        out[name] = min(times) * 1000
    db.client.close()
    return out


def _python(checkout: Path) -> str:
    own = checkout / ".venv" / "bin" / "python"
    return str(own) if own.exists() else sys.executable


def _measure(checkout: Path, log: Path, store: Path) -> dict[str, float]:
    python = _python(checkout)
    ingest = [python, "-c", "import sys; from dashboard.cli import main; sys.exit(main())",
              "ingest", str(log), "--site", SITE, "--store", str(store)]
    subprocess.run(ingest, cwd=checkout, check=True, capture_output=True)
    worker = [python, __file__, "--worker", str(store), "--checkout", str(checkout)]
    result = subprocess.run(worker, cwd=checkout, check=True, capture_output=True, text=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="a checkout of the version to compare")
    parser.add_argument("--lines", type=int, default=500_000)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--checkout", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        sys.path[0] = str(args.checkout)
        print(json.dumps(reads(args.worker)))
        return
    with tempfile.TemporaryDirectory(prefix="hitboard-event-reads-") as tmp:
        log = Path(tmp) / "log"
        logs.repeated(LOG, args.lines, log)
        versions = {"this version": ROOT}
        if args.baseline:
            versions["baseline"] = args.baseline.resolve()
        figures = {name: _measure(checkout, log, Path(tmp) / name.replace(" ", "-"))
                   for name, checkout in versions.items()}
    print(f"{args.lines:,} lines of {LOG.name}, ms (best of 3)\n")
    names = list(figures)
    print("| read | " + " | ".join(names) + (" | ratio |" if len(names) > 1 else " |"))
    print("|---" * (len(names) + 1 + (len(names) > 1)) + "|")
    for case in figures["this version"]:
        row = [f"{figures[n][case]:.1f}" for n in names]
        ratio = (f" | {figures['baseline'][case] / figures['this version'][case]:.2f}×"
                 if len(names) > 1 else "")
        print(f"| {case} | " + " | ".join(row) + ratio + " |")
    if len(names) > 1:
        print("\nratio: baseline time ÷ this version's (above 1: this version is faster)")


if __name__ == "__main__":
    main()
