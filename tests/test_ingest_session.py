"""The checkpoint of one log path: one owner at a time, epochs that keep event ids apart,
positions that resume only the same file."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys

import pytest

from queries.ingest.session import (
    IngestBusyError,
    IngestTakenOverError,
    LogSession,
    process_identity,
)
from queries.ingest.tail import FileId
from queries.stats import schema

OPTIONS = {"site": "s", "format": "auto", "events": True}
FID = FileId(1, 10, "/x/a.log")
AT = dt.datetime(2026, 3, 14, tzinfo=dt.UTC)


@pytest.fixture
def sessions(embedded_db, tmp_path):
    opened = []

    def open_session(name="a.log", host="h1"):
        session = LogSession(embedded_db, tmp_path / name, OPTIONS, host=host)
        opened.append(session)
        return session

    yield open_session
    for session in opened:
        session.close()


def test_a_second_run_is_refused_while_the_first_runs_and_takes_over_once_it_ends(
        embedded_db, sessions):
    first = sessions()
    with pytest.raises(IngestBusyError, match="this run is reading .*a.log already"):
        sessions()
    first.close()                              # its process lets the checkpoint go
    second = sessions()
    with pytest.raises(IngestTakenOverError, match="has taken over"):
        first.begin()
    killed = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                            capture_output=True, text=True, check=True)
    embedded_db[schema.CHECKPOINTS].update_one(        # as if it had been killed
        {"_id": second.id}, {"$set": {"process": [int(killed.stdout), 1]}})
    assert sessions().owner != second.owner


def test_a_checkpoint_held_by_a_process_id_now_reused_is_taken_over(embedded_db, sessions):
    first = sessions()
    first.start(FID, "h", size=10)
    first.reading(FID, 0, lambda: "h")
    first.consumed(10, 1)
    pid, started = process_identity(os.getpid())
    assert started is not None                 # Linux: the start time tells them apart
    embedded_db[schema.CHECKPOINTS].update_one(
        {"_id": first.id}, {"$set": {"process": [pid, started - 1]}})
    second = sessions()
    with pytest.raises(IngestTakenOverError, match="has taken over"):
        first.begin()                          # (a) refused: nothing of it is written
    assert (second.seq, second.interrupted, second.position) == (0, [], None)


def test_a_path_is_its_own_on_each_host_and_writer_ids_are_field_names(sessions):
    a, b, c = sessions("a.log"), sessions("a.log", host="h2"), sessions("b.log")
    assert len({a.id, b.id, c.id}) == len({a.writer, b.writer, c.writer}) == 3
    assert all(s.writer.startswith("ingest-") and len(s.writer) < 64 for s in (a, b, c))


def test_epochs_and_positions(embedded_db, sessions):
    fid = FID
    session = sessions()
    assert session.start(fid, "h", size=100) == 0 and session.file["epoch"] == 1
    session.reading(fid, 0, lambda: "h")
    session.consumed(40, 2)
    session.reading(fid, 40, lambda: "h")                 # continues: same epoch, range
    session.consumed(60, 1)
    assert [(r["epoch"], r["from"], r["to"], r["lines"]) for r in session.ranges] == \
        [(1, 0, 60, 3)]
    first_stream = session.stream()
    session.reading(fid, 0, lambda: "h2")                 # truncated: offsets restart
    session.consumed(20, 1)
    assert session.stream() != first_stream            # a new epoch: new event ids
    session.begin()
    session.flush_hits()
    session.commit()
    saved = embedded_db[schema.CHECKPOINTS].find_one({"_id": session.id})
    assert saved["state"] == "done" and saved["position"] == {
        "device": 1, "inode": 10, "head": "h2", "epoch": 2, "offset": 20, "line": 1}

    session.close()
    again = sessions()
    assert again.start(fid, "h2", size=20) == 20 and again.line == 1       # resumes
    assert again.start(fid, "h2", size=19) == 0 and again.file["epoch"] == 3  # shorter
    assert again.start(FileId(1, 11, "/x/a.log"), "h2", size=99) == 0   # another file
    assert again.start(fid, "other", size=99) == 0                       # another head
    assert again.start(fid, "h2", size=99, from_start=True) == 0
    assert again.file["epoch"] == 6



def test_a_killed_process_not_yet_reaped_holds_nothing():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert process_identity(child.pid) is not None
        child.kill()
        until = 50
        while process_identity(child.pid) is not None and until:   # a zombie until waited
            until -= 1
            subprocess.run(["sleep", "0.1"], check=True)
        assert process_identity(child.pid) is None
    finally:
        child.wait()


def test_a_follow_started_on_an_empty_log_knows_it_again_once_it_grew(tmp_path, embedded_db):
    """The position a follow saves names the file by its first line: one started on an
    empty file (just rotated) learns it once the line is there, so the next run resumes
    instead of counting the file again (found by the simulator, seed 0)."""
    from ingestkit import append

    from queries.ingest.run import Ingestor, follow, ingest_file

    log = tmp_path / "access.log"
    log.write_text("")

    class Stop:             # the lines arrive at the follower's second look; 4 looks
        looks = 0

        def is_set(self):
            self.looks += 1
            if self.looks == 2:
                append(log, 0, 10)
            return self.looks > 4

        def wait(self, timeout=None):
            return self.is_set()

    for run in (lambda i: follow(i, [str(log)], {str(log): "s"}, Stop(), poll=0.0,
                                 flush_every=0.0),
                lambda i: ingest_file(i, log, "s")):
        ingestor = Ingestor(embedded_db, site="s")
        run(ingestor)
        ingestor.close()
    whole = embedded_db[schema.DAILY].find({"metadata.page": "*"})
    assert sum(doc["daily"] for doc in whole) == 10
