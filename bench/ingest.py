"""Ingest throughput on the embedded store: log_hit (the use case's direct writes) against
HitRecorder (coalesced, one ``$inc`` upsert per document per flush).

    .venv/bin/python bench/ingest.py [--hits 100000] [--sample 5000]

Hits: 2 sites x 100 pages, spread at random over one UTC day. The recorder takes all
``--hits``; log_hit, ~100x slower, takes the first ``--sample`` of them. Each store lives
in a fresh temporary directory. Counts are checked: the recorder's documents for the
sample equal log_hit's field for field, and the full run's totals equal the hits sent.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import tempfile
import time

import queries
from queries.stats import schema
from queries.status import as_dict

DAY = dt.datetime(2026, 11, 21, tzinfo=dt.UTC)
SITES = ("site-1", "site-2")
PAGES = tuple(f"/page-{i}.html" for i in range(100))


def make_hits(count: int, seed: int) -> list[tuple[dt.datetime, str, str]]:
    rng = random.Random(seed)
    return [(DAY + dt.timedelta(seconds=rng.randrange(86400)), rng.choice(SITES),
             rng.choice(PAGES)) for _ in range(count)]


class CountingDB:
    """Counts the write statements and round trips a database receives."""

    def __init__(self, db):
        self.db, self.operations, self.round_trips = db, 0, 0

    def __getitem__(self, name):
        collection, owner = self.db[name], self

        class Counting:
            def update_one(self, *args, **kwargs):
                owner.operations += 1
                owner.round_trips += 1
                return collection.update_one(*args, **kwargs)

        return Counting()


def run_log_hit(hits, directory):
    db = queries.connect(directory)
    counting = CountingDB(db)
    started = time.perf_counter()
    for ts, site, page in hits:
        queries.log_hit(counting, ts, site, page)
    elapsed = time.perf_counter() - started
    return db, elapsed, counting.operations, counting.round_trips


def run_recorder(hits, directory):
    db = queries.connect(directory)
    started = time.perf_counter()
    recorder = queries.HitRecorder(db)
    for ts, site, page in hits:
        recorder.record(site, page, ts)
    recorder.close()  # the final flush is part of the cost
    elapsed = time.perf_counter() - started
    stats = as_dict(recorder.status())
    assert stats["hits_written"] == len(hits) and stats["pending_hits"] == 0, stats
    return db, elapsed, stats["db_operations"], stats["round_trips"], stats["flushes"]


def documents(db) -> dict:
    return {name: {d["_id"]: {k: v for k, v in d.items() if k != schema.FLUSHES}
                   for d in db[name].find()} for name in (schema.DAILY, schema.MONTHLY)}


def site_total(db) -> int:
    return sum(d["daily"] for d in db[schema.DAILY].find({"metadata.page": "*"}, {"daily": 1}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hits", type=int, default=100_000)
    parser.add_argument("--sample", type=int, default=5_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    hits = make_hits(args.hits, args.seed)
    sample = hits[: args.sample]

    with tempfile.TemporaryDirectory() as tmp:
        rec_db, rec_s, rec_ops, rec_trips, flushes = run_recorder(hits, f"{tmp}/recorder")
        log_db, log_s, log_ops, log_trips = run_log_hit(sample, f"{tmp}/log_hit")
        check_db, *_ = run_recorder(sample, f"{tmp}/recorder-sample")
        identical = documents(check_db) == documents(log_db)
        totals_ok = site_total(rec_db) == len(hits)
        for db in (rec_db, log_db, check_db):
            db.client.close()

    log_rate, rec_rate = len(sample) / log_s, len(hits) / rec_s
    rows = [
        ("log_hit", len(sample), log_rate, log_ops / len(sample), log_trips / len(sample)),
        ("HitRecorder", len(hits), rec_rate, rec_ops / len(hits), rec_trips / len(hits)),
    ]
    print(f"embedded store, {len(SITES)} sites x {len(PAGES)} pages, hits over one UTC day\n")
    print(f"{'writer':<12} {'hits':>8} {'hits/s':>10} {'DB ops/hit':>11} {'round trips/hit':>16}")
    for name, count, rate, ops, trips in rows:
        print(f"{name:<12} {count:>8} {rate:>10,.0f} {ops:>11.4f} {trips:>16.5f}")
    print(f"\nrecorder / log_hit hits/s ratio: {rec_rate / log_rate:.0f}x (target >= 50x)")
    print(f"recorder DB ops per hit: {rec_ops / len(hits):.4f} over {flushes} flushes "
          f"(target <= 0.01)")
    print(f"identical documents for the {len(sample)}-hit sample: {identical}; "
          f"site totals of the full run equal {len(hits)} hits: {totals_ok}")
    if not (identical and totals_ok):
        raise SystemExit("counts differ")


if __name__ == "__main__":
    main()
