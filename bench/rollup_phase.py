"""What the rollup phase of `hitboard ingest` costs, alone, and whether two trees agree.

    .venv/bin/python bench/rollup_phase.py [--inputs shifted:500000 longtail:200000]
        [--baseline /work/main] [--jobs 2] [--rounds 1]

Per input (``bench/logs.py``), once: the log, then a store ingested from it by this
tree's ``hitboard ingest --site real``, its rollups and visits then removed (the
collections ``rollups.*``, ``visits.*`` and their checkpoints): what an ingest leaves
just before its rollup phase. Then, per round and per tree (``--baseline``, a checkout
with its own ``.venv``, and this one), in a copy of that store, a fresh process runs the
phase (``build.run_rollups``, with ``--jobs`` forked worker processes lent to it as an
ingest lends them: a tree may use them or not) and prints its wall and CPU seconds (its
own and its workers'), the peak RSS of the process and of its largest worker, and a
digest of every rollup and visit document (``computed`` and ``ver`` left out: a time and
a writer's counter), runs grouped by digest. Same digest: the same documents, visitor
sketches byte for byte (whose bytes, not estimates, follow the order sketches were
united in).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import logs  # noqa: E402

CACHE = Path(tempfile.gettempdir()) / "hitboard-rollup-phase"
STRIP = """
import sys
import queries
from queries.store.connection import connect
db = connect(sys.argv[1])
for name in db.list_collection_names():
    if name.startswith(("rollups.", "visits.")) and name != "rollups.backfilled":
        db.drop_collection(name)
db["checkpoints"].delete_many({"_id": {"$in": ["rollups", "visits.pageviews"]}})
queries.ensure_indexes(db)
db.client.close()
"""
PHASE = """
import json, resource, sys, time
from queries import processes
from queries.store.connection import bulk_loading, connect
from queries.rollups.build import run_rollups
from queries.rollups.parallel import RollupWorkers
store, jobs = sys.argv[1], int(sys.argv[2])
pool = processes.pool(jobs, fork=True) if jobs > 1 and processes.can_fork() else None
db = connect(store)
bulk_loading(db)
wall, cpu = time.perf_counter(), time.process_time()
if pool is None:
    run = run_rollups(db)
else:
    with RollupWorkers(db, store, db.name, jobs, pool) as workers:
        run = run_rollups(db, workers=workers)
    pool.shutdown(wait=True)
wall = time.perf_counter() - wall
own = time.process_time() - cpu
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "cpu": own + kids.ru_utime + kids.ru_stime,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "worker_rss_mb": kids.ru_maxrss / 1024, "buckets": run.buckets,
                  "visit_days": run.visit_days}))
db.client.close()
"""
DIGEST = """
import hashlib, json, sys, zlib
from bson import Binary
from queries.store.connection import connect
db = connect(sys.argv[1])
out = {}
def plain(value):
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items() if k not in ("computed", "ver")}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, bytes | Binary):
        return zlib.decompress(value).hex() if value[:1] == b"x" else bytes(value).hex()
    return repr(value)
for name in sorted(db.list_collection_names()):
    if name.startswith(("rollups.", "visits.")):
        h = hashlib.blake2b(digest_size=8)
        n = 0
        for doc in sorted(db[name].find(), key=lambda d: str(d["_id"])):
            h.update(json.dumps(plain(doc), sort_keys=True).encode())
            n += 1
        out[name] = f"{n}:{h.hexdigest()}"
print(json.dumps(out))
db.client.close()
"""


def python(tree: Path) -> str:
    return str(tree / ".venv" / "bin" / "python")


def prepared(kind: str, lines: int) -> Path:
    """The stripped store of that input (made once, kept in ``CACHE``)."""
    home = CACHE / f"{kind}-{lines}"
    store = home / "store"
    if store.exists():
        return store
    home.mkdir(parents=True, exist_ok=True)
    log = home / "access.log"
    logs.make(kind, lines, log)
    subprocess.run(
        [
            str(ROOT / ".venv" / "bin" / "hitboard"),
            "ingest",
            str(log),
            "--site",
            "real",
            "--store",
            str(store),
        ],
        cwd=ROOT,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    subprocess.run([python(ROOT), "-c", STRIP, str(store)], cwd=ROOT, check=True)
    log.unlink()
    return store


def phase(tree: Path, template: Path, jobs: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="rollup-phase-") as tmp:
        store = Path(tmp) / "store"
        shutil.copytree(template, store)
        run = subprocess.run(
            [python(tree), "-c", PHASE, str(store), str(jobs)],
            cwd=tree,
            check=True,
            capture_output=True,
            text=True,
        )
        result = json.loads(run.stdout.strip().splitlines()[-1])
        digest = subprocess.run(
            [python(ROOT), "-c", DIGEST, str(store)],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        )
        result["digest"] = json.loads(digest.stdout)
        result["store_mb"] = sum(f.stat().st_size for f in store.rglob("*") if f.is_file()) / 1e6
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", nargs="+", default=["shifted:500000", "longtail:200000"])
    parser.add_argument("--baseline", type=Path, default=None)
    parser.add_argument("--jobs", type=int, nargs="+", default=[2])
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    trees = ([("baseline", args.baseline)] if args.baseline else []) + [("this", ROOT)]
    for item in args.inputs:
        kind, lines = item.split(":")
        template = prepared(kind, int(lines))
        for round_ in range(args.rounds):
            digests = {}
            for jobs in args.jobs:
                for name, tree in trees:
                    r = phase(tree, template, jobs)
                    digests[(name, jobs)] = r["digest"]
                    print(
                        f"{item} round {round_ + 1} {name:8} jobs {jobs}: "
                        f"wall {r['wall']:.2f} s, CPU {r['cpu']:.2f} s, RSS "
                        f"{r['rss_mb']:.0f} MB (worker {r['worker_rss_mb']:.0f}), store "
                        f"{r['store_mb']:.1f} MB, buckets {r['buckets']}",
                        flush=True,
                    )
            groups: dict[str, list] = {}
            for key, digest in digests.items():
                groups.setdefault(json.dumps(digest, sort_keys=True), []).append(key)
            for n, keys in enumerate(groups.values()):
                names = ", ".join(f"{name} jobs {jobs}" for name, jobs in keys)
                print(f"  documents {n + 1}: {names}")
            if len(groups) > 1:
                first, *others = (json.loads(digest) for digest in groups)
                differ = {k for other in others for k in first if first[k] != other.get(k)}
                print(f"  they differ in: {', '.join(sorted(differ))}")


if __name__ == "__main__":
    main()
