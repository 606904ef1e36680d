"""Recent-hits strategies: time and documents examined for "the n newest events of k pages".

Usage: .venv/bin/python bench/recent.py [--events 100000] [--pages 100]
           [--ns 100,1000,10000,100000] [--categories 1,10] [--repeat 1] [--store URI]

Events are spread uniformly over the pages and over one day (ties in a millisecond
happen, as in real traffic). Every strategy must return the same events; the bench
checks it. Documents examined come from explain() on a MongoDB server; the embedded
store has no explain() (its hash indexes read the buckets of the queried site and pages),
so there it prints the queries issued and documents returned only.
Without --store the events go into a temporary embedded store, written as its snapshot
file (the bench measures reads; loading through the journal is the recorder's bench).
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import shutil
import tempfile
import time
from pathlib import Path

import queries
from queries.events import recent
from queries.events.collection import INDEXES
from queries.stats import schema
from queries.store import inspect
from queries.store.embedded import journal

SITE = "bench"
DAY = dt.datetime(2026, 11, 20, tzinfo=dt.UTC)
STRATEGIES = {
    "sort+limit $in": lambda db, pages, n, trace: recent.recent_sort_limit(
        db, SITE, pages, n, merge="in", trace=trace),
    "sort+limit per page": lambda db, pages, n, trace: recent.recent_sort_limit(
        db, SITE, pages, n, merge="branches", trace=trace),
    "window": lambda db, pages, n, trace: recent.recent_window(db, SITE, pages, n, trace=trace),
}


def make_events(count: int, pages: int, seed: int = 6) -> list[dict]:
    rng = random.Random(seed)
    day_ms = 86_400_000
    return [{"time": DAY + dt.timedelta(milliseconds=rng.randrange(day_ms)), "site": SITE,
             "host": f"10.0.{i % 250}.{i % 199}", "method": "GET",
             "path": f"/page-{rng.randrange(pages)}", "query": "", "status": 200,
             "bytes": 512 + i % 4096, "referrer": "", "user_agent": "bench", "ingested": DAY}
            for i in range(count)]


def load_embedded(directory: Path, events: list[dict]):
    """Write the events as the store's snapshot (with the events indexes) and open it."""
    header = {"generation": 0, "indexes": [
        {"db": "hitboard", "c": schema.EVENTS, "keys": [list(pair) for pair in keys],
         "options": {"name": name}} for name, keys in INDEXES.items()]}
    journal.write_snapshot(directory, header,
                           ({"db": "hitboard", "c": schema.EVENTS, "d": e} for e in events))
    return queries.connect(str(directory), read_only=True)


def load_server(uri: str, events: list[dict]):
    db = queries.connect(uri, database="hitboard_bench_recent")
    db[schema.EVENTS].drop()
    recent.ensure_recent_index(db)
    for start in range(0, len(events), 10_000):
        db[schema.EVENTS].insert_many(events[start:start + 10_000], ordered=False)
    return db


def examined(db, trace: recent.Trace, collection_size: int) -> str:
    if queries.is_embedded(db):
        return "n/a (no explain)"
    keys = docs = 0
    for query in trace.queries:
        if query["kind"] == "count":
            plan = inspect.explain_count(db, schema.EVENTS, query["filter"])
        else:
            plan = inspect.explain_find(db, schema.EVENTS, query["filter"], query["sort"],
                                        query["limit"])
        if plan.reason:
            return plan.reason
        keys += plan.keys_examined or 0
        docs += plan.docs_examined or 0
    return f"{keys:,} keys / {docs:,} docs"


def run(db, page_count: int, ns: list[int], categories: list[int], repeat: int,
        collection_size: int) -> dict[str, float]:
    totals = dict.fromkeys(STRATEGIES, 0.0)
    print(f"{'k':>3} {'n':>7}  {'strategy':<20} {'ms':>10} {'queries':>7} {'returned':>9}"
          f"  examined")
    for k in categories:
        pages = [f"/page-{i}" for i in range(min(k, page_count))]
        for n in ns:
            answers = set()
            for name, strategy in STRATEGIES.items():
                best = float("inf")
                for _ in range(repeat):
                    trace = recent.Trace()
                    started = time.perf_counter()
                    result = strategy(db, pages, n, trace)
                    best = min(best, time.perf_counter() - started)
                answers.add(tuple(doc["_id"] for doc in result))
                totals[name] += best
                print(f"{k:>3} {n:>7,}  {name:<20} {best * 1000:>10,.1f} {len(trace.queries):>7}"
                      f" {trace.returned:>9,}  {examined(db, trace, collection_size)}",
                      flush=True)
            print(f"{'':>12}same answer from every strategy: {'yes' if len(answers) == 1 else 'NO'}"
                  f" ({len(result):,} events)", flush=True)
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000, help="the issue's figure is "
                        "1,000,000; loading them into the embedded store takes about a minute")
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--ns", default="100,1000,10000,100000")
    parser.add_argument("--categories", default="1,10")
    parser.add_argument("--repeat", type=int, default=1, help="best of this many runs")
    parser.add_argument("--store", help="mongodb:// URI of a server (default: a temporary "
                        "embedded store)")
    args = parser.parse_args()
    ns = [int(v) for v in args.ns.split(",")]
    categories = [int(v) for v in args.categories.split(",")]

    started = time.perf_counter()
    events = make_events(args.events, args.pages)
    print(f"generated {len(events):,} events over {args.pages} pages and one day "
          f"in {time.perf_counter() - started:.1f} s", flush=True)
    scratch = None
    started = time.perf_counter()
    if args.store:
        db = load_server(args.store, events)
        backend = queries.redact(args.store)
    else:
        scratch = Path(tempfile.mkdtemp(prefix="hitboard-bench-recent-"))
        db = load_embedded(scratch, events)
        backend = f"embedded store {scratch}"
    del events
    print(f"loaded into {backend} in {time.perf_counter() - started:.1f} s", flush=True)
    try:
        totals = run(db, args.pages, ns, categories, args.repeat, args.events)
    finally:
        if args.store:
            db.client.drop_database(db.name)
        db.client.close()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    fastest = min(totals, key=totals.get)
    print("total time per strategy over every case: " + ", ".join(
        f"{name} {seconds:,.2f} s ({seconds / totals[fastest]:.2f}x)"
        for name, seconds in totals.items()))
    print(f"fastest overall: {fastest}")


if __name__ == "__main__":
    main()
