"""The ingest's dimension process: what it is sent, and a run that it fails or dies in
stops with one clear error, then a rerun counts each line once."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from faultkit import counted

import queries
from dashboard.cli import main
from queries.counting import DimensionRecorder
from queries.dimensions.counters import unit_documents
from queries.dimensions.tally import LogTally
from queries.ingest.dimwriter import PackedUnits
from queries.ingest.logformat import LineParser, columns

LOG = Path(__file__).resolve().parents[2] / "shared" / "data" / "apache_combined_2015.log"
LINES = 3_000


@pytest.fixture
def log(tmp_path) -> Path:
    if not LOG.exists():
        pytest.skip(f"{LOG} is not there")
    path = tmp_path / "access.log"
    path.write_text("".join(LOG.open(encoding="utf-8").readlines()[:LINES]), encoding="utf-8")
    return path


def test_packed_units_unpack_to_the_units_and_count_the_recorders_documents(
        embedded_db, log):
    records = [LineParser().parse(line) for line in log.open(encoding="utf-8")]
    tally = LogTally()
    tally.add_lines(["site"] * len(records), columns(records))
    units = tally.pending()
    packed = PackedUnits.of(units)
    assert packed.unpack() == units
    recorder = DimensionRecorder(embedded_db, writer="w-dims", flush_interval=3600)
    try:
        recorder.add_pending(units)
        documents = {doc for key in packed.keys for doc in unit_documents(key)}
        assert len(documents) == recorder.status().pending_documents > 20
    finally:
        recorder.close(timeout=2.0)


# A dimension process driven as an ingest drives it, with units sent on its queue as
# worker processes send them: before their claim and after, out of order.
CLAIMS = textwrap.dedent("""
    import json, pickle, sys
    import queries
    from queries.dimensions.tally import LogTally
    from queries.errors import HitboardError
    from queries.ingest.dimwriter import Deferred, DimensionWriter
    from queries.ingest.logformat import LineParser, columns
    store, log = sys.argv[1:]
    writer = DimensionWriter(store, None)
    records = [LineParser().parse(line) for line in open(log, encoding="utf-8")]
    def units(part):
        tally = LogTally()
        tally.add_lines(["site"] * len(part), columns(part))
        return pickle.dumps(tally.pending())
    a, b, c = records[:1000], records[1000:2500], records[2500:]
    writer.open("w", 10**6)
    writer.units.put(((1, 1000), units(b), None))          # before its claim
    for chunk in ((1, 0), (1, 1000), (1, 2500)):
        writer.claim("w", Deferred(chunk, []))
    done = writer.start_flush("w", 1)                       # waits for (1, 0) and (1, 2500)
    writer.units.put(((1, 2500), units(c), None))
    writer.units.put(((1, 0), units(a), None))
    done()
    writer.claim("w", Deferred((2, 0), []))
    writer.units.put(((2, 0), None, "ValueError: a worker's bad day"))
    try:
        writer.start_flush("w", 2)()
        failed = ""
    except HitboardError as exc:
        failed = str(exc)
    writer.release("w")
    writer.close()
    db = queries.connect(store, read_only=True)
    print(json.dumps({"hits": sum(d["hits"] for d in db["dims.monthly"].find()),
                      "failed": failed}))
""")


def test_claimed_units_are_merged_whenever_they_come_and_a_workers_error_fails_the_flush(
        tmp_path, log):
    done = subprocess.run([sys.executable, "-c", CLAIMS, str(tmp_path / "store"), str(log)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["hits"] == LINES                  # all three chunks, flushed once
    assert result["failed"] == ("the dimensions could not be written (a worker counting "
                                "them: ValueError: a worker's bad day): run again to resume")


# The ingest CLI with two forked workers and its dimension process; FAULT, applied before
# the fork, runs in the dimension process (the only one that flushes dimensions).
RUN = textwrap.dedent("""
    import os, sys, time
    from pymongo.errors import OperationFailure
    from dashboard.cli import main
    from queries.counting import DimensionRecorder
    from queries.ingest import run as ingest
    ingest.PARALLEL_BYTES = 0             # this small file goes to the workers too
    from queries.ingest.mapper import LineMapper
    # Only the run's numbered flushes: the recorder's timer calls flush() too (which,
    # without a number, writes nothing for an ingest's recorder), and would die first
    # on a slow machine.
    def fail(self, seq=None, writing=None):
        if seq is not None:
            raise OperationFailure("disk full")
        return 0
    def die(self, seq=None, writing=None):
        if seq is not None:
            os._exit(9)
        return 0
    def die_counting(self, slices):
        # Once its tally is sent: a worker killed while writing its result hangs
        # Python's process pool, whatever the ingest does.
        time.sleep(1)
        os._exit(9)
    owner, name, fault = {"fails": (DimensionRecorder, "flush", fail),
                          "dies": (DimensionRecorder, "flush", die),
                          "worker dies": (LineMapper, "count_dimensions", die_counting),
                          }[sys.argv[1]]
    setattr(owner, name, fault)
    main(sys.argv[2:])
""")


@pytest.mark.parametrize(("fault", "says"), [
    ("fails", "the dimensions could not be written (OperationFailure: disk full)"),
    ("dies", "the ingest's dimension process died"),
])
def test_a_dimension_process_that_fails_or_dies_stops_the_run_and_a_rerun_counts_once(
        tmp_path, log, fault, says):
    store = str(tmp_path / "store")
    args = ["ingest", "--site", "logs", "--jobs", "2", "--store", store, str(log)]
    run = subprocess.run([sys.executable, "-c", RUN, fault, *args], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 1, run.stderr
    assert says in run.stderr + run.stdout
    assert "Traceback" not in run.stderr
    db = queries.connect(store, read_only=True)
    try:                       # stopped in its flush: nothing committed
        checkpoint = db["checkpoints"].find_one()
        assert checkpoint["state"] == "flushing" and checkpoint["position"] is None
    finally:
        db.client.close()

    rerun = CliRunner().invoke(main, args)
    assert rerun.exit_code == 0, rerun.output
    assert "completed the flush a stopped run left unfinished" in rerun.output
    db = queries.connect(store, read_only=True)
    try:                       # each line once: hit counters and dimensions
        daily, monthly = counted(db, "logs")
        assert daily["*"] == monthly["*"] == LINES
        for coll in ("dims.hourly", "dims.daily", "dims.monthly"):
            assert sum(doc["hits"] for doc in db[coll].find()) == LINES, coll
    finally:
        db.client.close()


def test_a_worker_dying_before_sending_its_units_stops_the_run_and_a_rerun_counts_once(
        tmp_path, log):
    """Its tally was merged, its units never come: the flush that waits for them stops
    the run (it does not wait for ever), and nothing is committed."""
    store = str(tmp_path / "store")
    args = ["ingest", "--site", "logs", "--jobs", "2", "--store", store, str(log)]
    run = subprocess.run([sys.executable, "-c", RUN, "worker dies", *args],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stderr
    assert "an ingest worker process died" in run.stderr + run.stdout
    assert "Traceback" not in run.stderr
    db = queries.connect(store, read_only=True)
    try:
        assert db["checkpoints"].find_one()["position"] is None
        assert db["dims.monthly"].count_documents({}) == 0
    finally:
        db.client.close()
    rerun = CliRunner().invoke(main, args)
    assert rerun.exit_code == 0, rerun.output
    db = queries.connect(store, read_only=True)
    try:
        daily, _ = counted(db, "logs")
        assert daily["*"] == LINES
        assert sum(doc["hits"] for doc in db["dims.monthly"].find()) == LINES
    finally:
        db.client.close()


def test_two_logs_in_one_run_each_have_their_recorder_in_the_dimension_process(tmp_path, log):
    other = tmp_path / "other.log"
    other.write_text(log.read_text(encoding="utf-8")[:200_000].rsplit("\n", 1)[0] + "\n",
                     encoding="utf-8")
    lines = LINES + len(other.read_text(encoding="utf-8").splitlines())
    store = str(tmp_path / "store")
    script = ("import sys\nfrom dashboard.cli import main\nfrom queries.ingest import run\n"
              "run.PARALLEL_BYTES = 0\nmain(sys.argv[1:])\n")
    run = subprocess.run([sys.executable, "-c", script, "ingest", "--site", "logs", "--jobs",
                          "2", "--store", store, str(log), str(other)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    db = queries.connect(store, read_only=True)
    try:
        assert sum(doc["hits"] for doc in db["dims.monthly"].find()) == lines
        writers = {writer for doc in db["dims.monthly"].find() for writer in doc["flushes"]}
        assert len(writers) == 2             # one recorder (flush guard) per log
    finally:
        db.client.close()
