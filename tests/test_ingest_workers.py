"""Worker processes map a large log exactly as the ingest process would: the same
counters, dimensions, visitors, events and summary, in one run or across a stop."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from fakes import stored_count, stored_events

import queries
from queries.dimensions import reads
from queries.ingest import chunks
from queries.ingest import run as ingest
from queries.stats import schema

LOG = Path(__file__).resolve().parents[2] / "shared" / "data" / "apache_combined_2015.log"
SITE = "www.semicomplete.com"
START, END = dt.datetime(2015, 5, 17, tzinfo=dt.UTC), dt.datetime(2015, 5, 21, tzinfo=dt.UTC)

pytestmark = pytest.mark.skipif(not LOG.exists(), reason=f"{LOG} is not there")


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of ~700 lines, batches of 2,000: many of each in the 10,000 lines; every
    file goes to the workers."""
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 700 * 237)     # the log's mean line: 237 B
    monkeypatch.setattr(ingest, "BATCH_LINES", 2_000)
    monkeypatch.setattr(ingest, "PARALLEL_BYTES", 0)


def ingested(store: Path, jobs: int, stop=None):
    db = queries.connect(str(store))
    queries.ensure_indexes(db)
    ingestor = ingest.Ingestor(db, jobs=jobs, store=str(store), database=db.name)
    try:
        ingest.ingest_file(ingestor, LOG, SITE, stop=stop)
    finally:
        ingestor.close()
    return db, ingestor.summary


def counters(db, coll: str) -> dict:
    """Each document's counts, without the writers' guards and sketch owners."""
    return {doc["_id"]: {k: v for k, v in doc.items() if k not in ("flushes", "owners")}
            for doc in db[coll].find()}


def test_workers_store_what_the_ingest_process_stores(tmp_path, small_chunks):
    here, summary_here = ingested(tmp_path / "here", jobs=1)
    there, summary_there = ingested(tmp_path / "there", jobs=2)
    try:
        for coll in (schema.DAILY, schema.MONTHLY, "dims.hourly", "dims.daily",
                     "dims.monthly"):
            assert counters(there, coll) == counters(here, coll), coll
        events = [{k: v for k, v in doc.items() if k != "_id"} for doc in stored_events(here)]
        assert len(events) == 10_000
        assert [{k: v for k, v in doc.items() if k != "_id"}
                for doc in stored_events(there)] == events
        assert (reads.visitors(there, SITE, START, END).n
                == reads.visitors(here, SITE, START, END).n)
        for name in ("lines", "parsed", "hits", "rejected", "tolerated", "sites", "first",
                     "last"):
            assert getattr(summary_there, name) == getattr(summary_here, name), name
        assert summary_there.events.written == summary_here.events.written == 10_000
    finally:
        here.client.close()
        there.client.close()


FORKED = textwrap.dedent("""
    import sys
    import queries
    from queries.ingest import chunks
    from queries.ingest import run as ingest
    chunks.CHUNK_BYTES, ingest.BATCH_LINES, ingest.PARALLEL_BYTES = 700 * 237, 2_000, 0
    store, log, site = sys.argv[1:]
    pool = ingest.fork_workers(ingest.worker_config(store, None, None, "auto", True, None,
                                                    True), 2)
    assert pool.forked, "forked before the store opened, with no other thread"
    db = queries.connect(store)
    queries.ensure_indexes(db)
    ingestor = ingest.Ingestor(db, jobs=2, store=store, pool=pool)
    try:
        ingest.ingest_file(ingestor, log, site)
    finally:
        ingestor.close()
        pool.close()
    print(ingestor.summary.parsed)
""")


def test_forked_workers_store_what_the_ingest_process_stores(tmp_path, small_chunks):
    """Workers forked before the store opens (as ``hitboard ingest`` starts them), and
    with them the process that flushes the dimensions (``queries.ingest.dimwriter``)."""
    done = subprocess.run([sys.executable, "-c", FORKED, str(tmp_path / "there"), str(LOG),
                           SITE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["10000"]
    here, _ = ingested(tmp_path / "here", jobs=1)
    there = queries.connect(str(tmp_path / "there"))
    try:
        for coll in (schema.DAILY, schema.MONTHLY, "dims.hourly", "dims.daily",
                     "dims.monthly"):
            assert counters(there, coll) == counters(here, coll), coll
        assert (reads.visitors(there, SITE, START, END).n
                == reads.visitors(here, SITE, START, END).n)
        for by in ("referrer", "page", "browser"):
            assert (reads.breakdown(there, SITE, by, START, END).to_dict("records")
                    == reads.breakdown(here, SITE, by, START, END).to_dict("records")), by
        assert stored_count(there) == 10_000
    finally:
        here.client.close()
        there.client.close()


def test_a_store_that_cannot_open_is_one_clear_error_with_workers_forked(tmp_path):
    """The workers are forked before the store opens: they must not report it too."""
    not_a_store = tmp_path / "notes.txt"
    not_a_store.write_text("")
    script = ("import sys\nfrom dashboard.cli import main\nfrom queries.ingest import run\n"
              "run.PARALLEL_BYTES = 0\nmain(sys.argv[1:])\n")
    done = subprocess.run([sys.executable, "-c", script, "ingest", str(LOG), "--store",
                           str(not_a_store)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "is a file, not a store directory" in done.stderr
    assert "Traceback" not in done.stderr


def test_workers_are_spawned_beside_other_threads_and_refused_for_other_options(tmp_path):
    db = queries.connect(str(tmp_path / "store"))
    running = threading.Event()
    thread = threading.Thread(target=running.wait)
    thread.start()
    try:
        pool = ingest.WorkerPool(ingest.worker_config(str(tmp_path / "store"), None, None,
                                                      "auto", False, None, True), 2, fork=True)
    finally:
        running.set()
        thread.join()
    try:
        assert not pool.forked        # another thread ran: spawned, not forked
        with pytest.raises(queries.HitboardError, match="other options"):
            ingest.Ingestor(db, jobs=2, store=str(tmp_path / "store"), pool=pool)
    finally:
        pool.close()
        db.client.close()


def test_a_run_stopped_midway_then_resumed_counts_each_line_once(tmp_path, small_chunks):
    merged = []
    db, summary = ingested(tmp_path / "store", jobs=2,
                           stop=lambda: merged.append(1) or len(merged) == 5)
    assert 0 < summary.lines < 10_000
    db.client.close()
    db, summary = ingested(tmp_path / "store", jobs=2)
    try:
        assert sum(d["monthly"] for d in db[schema.MONTHLY].find({"metadata.page": "*"})) \
            == 10_000
        assert sum(d["hits"] for d in db["dims.monthly"].find()) == 10_000
        assert stored_count(db) == 10_000
    finally:
        db.client.close()


def test_without_worker_processes_the_lines_are_mapped_here_and_the_run_says_so(
        tmp_path, small_chunks, monkeypatch):
    def refused(*args):
        raise OSError("no /dev/shm")

    monkeypatch.setattr(ingest, "WorkerPool", refused)
    db, summary = ingested(tmp_path / "store", jobs=2)
    try:
        assert summary.parsed == 10_000 and stored_count(db) == 10_000
        assert any("no worker processes (no /dev/shm)" in note for note in summary.notes)
    finally:
        db.client.close()


def test_a_workers_counting_thread_sends_each_chunks_units_or_its_error():
    """What a forked worker's thread sends the dimension process for the chunks it has
    handed over: their units as counted at once, or the error; at a lower priority."""
    import os
    import pickle
    import queue

    from queries.ingest import workers
    from queries.ingest.mapper import LineMapper

    chunk = LOG.read_bytes()[:200_000].rsplit(b"\n", 1)[0] + b"\n"
    mapper = LineMapper(SITE, defer_dimensions=True)
    slices = mapper.map_chunk(chunk, 0, SITE, 1, None).slices
    units: queue.Queue = queue.Queue()
    counting = workers._Counting(mapper, units)
    try:
        counting.add((1, 0), slices)
        counting.add((1, 9), [("not", "columns")])
        sent, data, error = units.get(timeout=30)
        assert (sent, error) == ((1, 0), None)
        assert pickle.loads(data) == LineMapper(SITE).map_chunk(chunk, 0, SITE, 1, None).units
        sent, data, error = units.get(timeout=30)
        assert (sent, data) == ((1, 9), None) and error.startswith("TypeError: ")
        if sys.platform == "linux":       # behind the mapping and the hit counts
            assert os.getpriority(os.PRIO_PROCESS, counting.thread.native_id) == \
                os.getpriority(os.PRIO_PROCESS, 0) + workers.NICENESS
    finally:
        counting.close()
    assert not counting.thread.is_alive()
