"""The ingest's dimension process: what it is sent, and a run that it fails or dies in
stops with one clear error, then a rerun counts each line once."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from faultkit import counted

import queries
from dashboard.cli import main
from queries.dimensions import DimensionRecorder
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


# The ingest CLI with two forked workers and its dimension process; FAULT, applied before
# the fork, runs in the dimension process (the only one that flushes dimensions).
RUN = textwrap.dedent("""
    import os, sys
    from pymongo.errors import OperationFailure
    from dashboard.cli import main
    from queries.dimensions import DimensionRecorder
    from queries.ingest import run as ingest
    ingest.PARALLEL_BYTES = 0             # this small file goes to the workers too
    def fail(self, seq=None, writing=None):
        raise OperationFailure("disk full")
    def die(self, seq=None, writing=None):
        os._exit(9)
    DimensionRecorder.flush = {"fails": fail, "dies": die}[sys.argv[1]]
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
