"""`hitboard ingest` in one process, the next chunk mapped in a thread while a batch is
flushed: a run stopped midway leaves no event past its position, a flush that fails
stops the run and a rerun counts each line once, two logs keep a recorder each, and
``--jobs`` sets the mapping's threads."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes import stored_count
from faultkit import counted
from pymongo.errors import OperationFailure

import queries
from dashboard.cli import main
from queries.counting import DimensionRecorder
from queries.ingest import chunks
from queries.ingest import run as ingest
from queries.stats import schema

LOG = Path(__file__).resolve().parents[2] / "shared" / "data" / "apache_combined_2015.log"
SITE = "www.semicomplete.com"

pytestmark = pytest.mark.skipif(not LOG.exists(), reason=f"{LOG} is not there")


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of ~700 lines, batches of 2,000: many of each in the 10,000 lines."""
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 700 * 237)     # the log's mean line: 237 B
    monkeypatch.setattr(ingest, "BATCH_LINES", 2_000)


def ingested(store: Path, stop=None):
    db = queries.connect(str(store))
    queries.ensure_indexes(db)
    ingestor = ingest.Ingestor(db)
    try:
        ingest.ingest_file(ingestor, LOG, SITE, stop=stop)
    finally:
        ingestor.close()
    return db, ingestor.summary


def test_a_run_stopped_midway_keeps_no_event_past_its_position_and_resumes_once(
        tmp_path, small_chunks):
    """The chunk mapped ahead when the run stops wrote its events: they leave, since
    its lines are read again."""
    merged = []
    db, summary = ingested(tmp_path / "store",
                           stop=lambda: merged.append(1) or len(merged) == 5)
    try:
        assert 0 < summary.lines < 10_000
        assert stored_count(db) == summary.lines
        position = db[schema.CHECKPOINTS].find_one()["position"]
        assert position["line"] == summary.lines
    finally:
        db.client.close()
    db, _ = ingested(tmp_path / "store")
    try:
        assert sum(d["monthly"] for d in db[schema.MONTHLY].find({"metadata.page": "*"})) \
            == 10_000
        assert sum(d["hits"] for d in db["dims.monthly"].find()) == 10_000
        assert stored_count(db) == 10_000
    finally:
        db.client.close()


def test_a_flush_that_fails_stops_the_run_and_a_rerun_counts_once(tmp_path, monkeypatch):
    store = str(tmp_path / "store")
    args = ["ingest", "--site", "logs", "--store", store, str(LOG)]
    flush = DimensionRecorder.flush

    def full(self, seq=None, writing=None):
        if seq is not None:      # the run's numbered flushes, not the recorder's timer
            raise OperationFailure("disk full")
        return flush(self, seq=seq, writing=writing)

    monkeypatch.setattr(DimensionRecorder, "flush", full)
    run = CliRunner().invoke(main, args)
    assert run.exit_code == 1, run.output
    assert "Error: disk full" in run.output and "run the same command again" in run.output
    db = queries.connect(store, read_only=True)
    try:                       # stopped in its flush: nothing committed
        checkpoint = db[schema.CHECKPOINTS].find_one()
        assert checkpoint["state"] == "flushing" and checkpoint["position"] is None
    finally:
        db.client.close()
    monkeypatch.setattr(DimensionRecorder, "flush", flush)
    rerun = CliRunner().invoke(main, args)
    assert rerun.exit_code == 0, rerun.output
    assert "completed the flush a stopped run left unfinished" in rerun.output
    db = queries.connect(store, read_only=True)
    try:                       # each line once: hit counters and dimensions
        daily, monthly = counted(db, "logs")
        assert daily["*"] == monthly["*"] == 10_000
        for coll in ("dims.hourly", "dims.daily", "dims.monthly"):
            assert sum(doc["hits"] for doc in db[coll].find()) == 10_000, coll
    finally:
        db.client.close()


def test_two_logs_in_one_run_each_have_their_recorder(tmp_path):
    other = tmp_path / "other.log"
    other.write_text(LOG.read_text(encoding="utf-8")[:200_000].rsplit("\n", 1)[0] + "\n",
                     encoding="utf-8")
    lines = 10_000 + len(other.read_text(encoding="utf-8").splitlines())
    store = str(tmp_path / "store")
    run = CliRunner().invoke(main, ["ingest", "--site", "logs", "--store", store, str(LOG),
                                    str(other)])
    assert run.exit_code == 0, run.output
    db = queries.connect(store, read_only=True)
    try:
        assert sum(doc["hits"] for doc in db["dims.monthly"].find()) == lines
        writers = {writer for doc in db["dims.monthly"].find() for writer in doc["flushes"]}
        assert len(writers) == 2             # one recorder (flush guard) per log
    finally:
        db.client.close()


def test_a_store_that_cannot_open_is_one_clear_error(tmp_path):
    not_a_store = tmp_path / "notes.txt"
    not_a_store.write_text("")
    run = CliRunner().invoke(main, ["ingest", str(LOG), "--store", str(not_a_store)])
    assert run.exit_code == 2
    assert "is a file, not a store directory" in run.output
    assert "Traceback" not in run.output


THREADS = """
import sys
from dashboard.cli import main
try:
    main(sys.argv[1:])
finally:
    import polars
    print("threads", polars.thread_pool_size(), file=sys.stderr)
"""


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_jobs_sets_the_threads_that_map_the_lines(tmp_path, jobs):
    """Polars reads POLARS_MAX_THREADS once, when first imported: the command sets it
    before then."""
    done = subprocess.run([sys.executable, "-c", THREADS, "ingest", "--jobs", jobs,
                           "--no-events", "--site", "s", "--store", str(tmp_path / "s"),
                           str(LOG)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr.rsplit("threads ", 1)[1].split() == [jobs]
