"""The embedded store on hitboard's own workload, against the first embedded store.

    .venv/bin/python bench/store.py [--upserts 170000] [--events 200000]

Runs the same workload, each in its own process, on today's store (SQLite) and on the
baseline: the first embedded store (mongomock + journal, commit 8bc55f9), taken from this
repository's history with ``git archive`` (it needs ``mongomock``: ``pip install
mongomock``; without it the baseline is skipped with the reason). The workload:

- coalesced ``$inc`` upserts, as the HitRecorder sends them: rounds of one ``bulk_write``
  over 500 documents (50 pages × 10 sites), each update raising 4 minute counters plus
  ``daily`` and ``hourly``, so documents grow towards 1,440 minute counters;
- raw events written 1,000 at a time by the event writer (10 sites × 100 pages);
- the newest 100 events of 10 pages (the recent-hits feed);
- the rollups' ``$group`` by page, status and hour over every event of a site;
- the chart reads of the Live and History pages on a year of backfilled history (one
  site, 20 pages), each the best of 5: minutes of the last hour, minutes over 2 days of 10
  pages, hours over 7 days, days over 30 and 365 days, top pages over 30 days;
- reopening in a new process and answering one chart read, with its RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "8bc55f9"


def workload(store: str, upserts: int, events: int) -> dict:
    import datetime as dt
    import random

    from pymongo import UpdateOne

    import queries

    schema = _first("queries.schema", "queries.stats.schema")
    EventWriter, recent_hits, hourly_hits = _event_api()

    rng = random.Random(7)
    day = dt.datetime(2026, 11, 20, tzinfo=dt.UTC)
    db = queries.connect(store)
    queries.ensure_indexes(db)
    out = {}
    docs = [(f"site-{s}", f"/page-{p}") for s in range(10) for p in range(50)]
    started = time.perf_counter()
    done = 0
    seq = 0
    while done < upserts:
        seq += 1
        ops = []
        for site, page in docs:
            inc = {"daily": 4}
            for _ in range(4):
                minute = rng.randrange(1440)
                h, m = divmod(minute, 60)
                inc[f"hourly.{h}"] = inc.get(f"hourly.{h}", 0) + 1
                inc[f"minute.{h}.{m}"] = inc.get(f"minute.{h}.{m}", 0) + 1
            ops.append(UpdateOne({"_id": f"20261120/{site}{page}", "flushes.bench": {"$ne": seq}},
                                 {"$inc": inc, "$set": {"flushes.bench": seq},
                                  "$setOnInsert": {"metadata": {"date": day, "site": site,
                                                                "page": page}}},
                                 upsert=True))
        db[schema.DAILY].bulk_write(ops[:upserts - done], ordered=False)
        done += min(len(ops), upserts - done)
    out["upserts_per_s"] = upserts / (time.perf_counter() - started)

    started = time.perf_counter()
    writer = EventWriter(db, clock=lambda: day)
    for i in range(events):
        writer.add({"time": day + dt.timedelta(seconds=i * 86_400 / events),
                    "site": f"site-{i % 10}", "host": f"10.0.{i % 250}.{i % 199}",
                    "method": "GET", "path": f"/page-{rng.randrange(100)}", "query": "",
                    "status": rng.choice((200, 200, 200, 304, 404, 500)),
                    "bytes": rng.randrange(100, 50_000), "referrer": "",
                    "user_agent": "Mozilla/5.0 (bench)"})
        if writer.pending() == 1000:
            writer.flush()
    writer.flush()
    out["events_per_s"] = events / (time.perf_counter() - started)

    pages = [f"/page-{p}" for p in range(10)]
    times = []
    for _ in range(5):
        started = time.perf_counter()
        newest = recent_hits(db, "site-1", pages, 100)
        times.append(time.perf_counter() - started)
    out["recent_ms"] = min(times) * 1000
    out["recent_rows"] = len(newest)

    started = time.perf_counter()
    hours = [day + dt.timedelta(hours=h) for h in range(24)]
    out["group_hits"] = hourly_hits(db, "site-1", hours)
    out["group_s"] = time.perf_counter() - started
    out.update(chart_reads(db))
    db.client.close()
    return out


def _first(*names: str):
    """The first of these modules that imports: the first store's name (``BASELINE``)
    first, since this checkout's modules are importable beside it too."""
    import importlib

    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise ImportError(f"none of {names}")


def _event_api():
    """(EventWriter, recent_hits, hits of a site's hours) of the version running: the
    first store's, a document per event (``queries/events.py``, ``queries/recent.py``),
    or this one's, events in buckets (``queries/events/``)."""
    old = _first("queries.events")
    if hasattr(old, "EventWriter"):
        schema = _first("queries.schema")

        def hourly_hits(db, site, hours):
            end = max(hours) + (hours[1] - hours[0])
            pipeline = [
                {"$match": {"site": site, "time": {"$gte": min(hours), "$lt": end}}},
                {"$group": {"_id": {"page": "$path", "status": "$status",
                                    "h": {"$hour": "$time"}},
                            "hits": {"$sum": 1}, "bytes": {"$sum": "$bytes"}}}]
            return sum(g["hits"] for g in db[schema.EVENTS].aggregate(pipeline))

        return old.EventWriter, _first("queries.recent").recent_hits, hourly_hits
    reads = _first("queries.events.reads")

    def hourly_hits(db, site, hours):
        return sum(row[3] for row in reads.hourly_totals(db, site, hours))

    writer = _first("queries.events.writer", "queries.events.collection")   # moved
    return writer.EventWriter, _first("queries.events.recent").recent_hits, hourly_hits


def chart_reads(db) -> dict:
    """A year of history for one site, then each chart read, best of 5, in ms."""
    import datetime as dt

    import numpy as np

    import queries
    DayCounts = _first("queries.backfill", "queries.stats.backfill",  # noqa: N806
                       "queries.jobs.backfill").DayCounts

    site, pages = "history", [f"/page-{p:02d}" for p in range(20)]
    end = dt.datetime(2026, 11, 21, tzinfo=dt.UTC)
    rng = np.random.default_rng(3)
    days = (DayCounts(site, end - dt.timedelta(days=d), pages,
                      rng.poisson(2.0, size=(len(pages), 1440)).astype(np.int64))
            for d in range(1, 366))
    queries.backfill(db, days)
    now = end - dt.timedelta(minutes=1)
    reads = {
        "read_minutes_1h": (queries.minute_series, (db, site, now - dt.timedelta(hours=1), now),
                            {}),
        "read_minutes_2d_10p": (queries.minute_series,
                                (db, site, now - dt.timedelta(days=2), now), {"pages": pages[:10]}),
        "read_hours_7d": (queries.hourly_series, (db, site, now - dt.timedelta(days=7), now), {}),
        "read_days_30d": (queries.daily_series, (db, site, now - dt.timedelta(days=30), now), {}),
        "read_days_365d": (queries.daily_series, (db, site, now - dt.timedelta(days=365), now),
                           {}),
        "read_top_30d": (queries.top_pages, (db, site, now - dt.timedelta(days=30), now),
                         {"n": 10}),
    }
    out = {}
    for name, (read, args, kwargs) in reads.items():
        times = []
        for _ in range(5):
            started = time.perf_counter()
            read(*args, **kwargs)
            times.append(time.perf_counter() - started)
        out[name] = min(times) * 1000
    return out


def reopen(store: str) -> dict:
    import datetime as dt

    import queries

    started = time.perf_counter()
    db = queries.connect(store, read_only=True)
    frame = queries.hourly_series(db, "site-3", dt.datetime(2026, 11, 20, tzinfo=dt.UTC),
                                  dt.datetime(2026, 11, 21, tzinfo=dt.UTC),
                                  pages=[f"/page-{p}" for p in range(10)])
    elapsed = time.perf_counter() - started
    hits = int(frame.to_numpy().sum())
    db.client.close()
    return {"reopen_s": elapsed, "reopen_hits": hits,
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _worker(args) -> None:
    sys.path.insert(0, args.engine_path)
    if args.reopen:
        print(json.dumps(reopen(args.store)))
    else:
        print(json.dumps(workload(args.store, args.upserts, args.events)))


def _run(engine_path: str, store: str, args, reopen_only: bool = False) -> dict:
    command = [sys.executable, __file__, "--worker", "--engine-path", engine_path,
               "--store", store, "--upserts", str(args.upserts), "--events", str(args.events)]
    if reopen_only:
        command.append("--reopen")
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, cwd=engine_path)
    if result.returncode:
        raise SystemExit(f"{engine_path}: {result.stderr[-2000:]}")
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    if reopen_only:
        figures["reopen_wall_s"] = time.perf_counter() - started
    return figures


def _baseline(tmp: Path) -> tuple[Path | None, str]:
    try:
        import mongomock  # noqa: F401
    except ImportError:
        return None, "mongomock is not installed (pip install mongomock)"
    target = tmp / "baseline"
    target.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", BASELINE, "queries"],
                             capture_output=True)
    if archive.returncode:
        return None, f"git archive {BASELINE} failed: {archive.stderr.decode()[:200]}"
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target, ""


ROWS = [("upserts/s", "upserts_per_s", "{:,.0f}", True),
        ("events/s", "events_per_s", "{:,.0f}", True),
        ("newest 100 of 10 pages", "recent_ms", "{:,.2f} ms", False),
        ("$group by page/status/hour", "group_s", "{:,.3f} s", False),
        ("chart: minutes, last hour", "read_minutes_1h", "{:,.1f} ms", False),
        ("chart: minutes, 2 days × 10 pages", "read_minutes_2d_10p", "{:,.1f} ms", False),
        ("chart: hours, 7 days", "read_hours_7d", "{:,.1f} ms", False),
        ("chart: days, 30 days", "read_days_30d", "{:,.1f} ms", False),
        ("chart: days, 365 days", "read_days_365d", "{:,.1f} ms", False),
        ("chart: top pages, 30 days", "read_top_30d", "{:,.1f} ms", False),
        ("reopen + first answer (in process)", "reopen_s", "{:,.3f} s", False),
        ("reopen, whole process", "reopen_wall_s", "{:,.2f} s", False),
        ("RSS after reopen", "rss_mb", "{:,.0f} MB", False)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upserts", type=int, default=170_000)
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--reopen", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--engine-path", help=argparse.SUPPRESS)
    parser.add_argument("--store", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker(args)
        return
    tmp = Path(tempfile.mkdtemp(prefix="hitboard-bench-store-"))
    try:
        engines = {"SQLite store (this checkout)": ROOT}
        baseline, reason = _baseline(tmp)
        if baseline is not None:
            engines[f"first store ({BASELINE}, mongomock)"] = baseline
        results = {}
        for name, path in engines.items():
            store = str(tmp / f"store-{len(results)}")
            figures = _run(str(path), store, args)
            figures.update(_run(str(path), store, args, reopen_only=True))
            results[name] = figures
            print(f"{name}: done ({figures['group_hits']:,} events grouped, "
                  f"{figures['recent_rows']} recent, {figures['reopen_hits']:,} hits reread)",
                  file=sys.stderr)
        print(f"\n{args.upserts:,} upserts into 500 documents, {args.events:,} events "
              f"(os.cpu_count() = {os.cpu_count()})\n")
        names = list(results)
        print("| what | " + " | ".join(names) + (" | ratio |" if len(names) == 2 else " |"))
        print("|---" * (len(names) + 1 + (len(names) == 2)) + "|")
        for label, key, fmt, higher_better in ROWS:
            cells = [fmt.format(results[n][key]) for n in names]
            ratio = ""
            if len(names) == 2:
                new, old = results[names[0]][key], results[names[1]][key]
                factor = (new / old) if higher_better else (old / new if new else float("inf"))
                ratio = f" {factor:,.1f}× better |" if factor >= 1 else \
                    f" {1 / factor:,.1f}× worse |"
            print(f"| {label} | " + " | ".join(cells) + " |" + ratio)
        if reason:
            print(f"\nbaseline skipped: {reason}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
