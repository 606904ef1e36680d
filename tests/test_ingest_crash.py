"""`hitboard ingest` killed at each step of its flush (on the embedded store), in
batch and --follow mode, then run again: every log line is counted exactly once,
in the statistics, the dimensions, the events and the visits; an interrupted flush is
completed from a rotated file, and only with the options that began it."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from pathlib import Path

import pytest
from faultkit import expected
from ingestkit import (
    LINE,
    PAGES,
    START,
    append,
    checkpoint,
    ingest_cli,
    kill_at,
    sent,
    stored_counts,
)

import queries
from queries.visits import reads as visit_reads

# -- a kill at each step of a flush, on the embedded store ---------------------------------
# `hitboard ingest` with small batches stops itself at one step of its second flush
# (``queries.processes.halt_point``) and is SIGKILLed there, in whichever thread it is
# (a batch's flush runs in a thread of its own while the next chunk is mapped), as in a
# power loss.
STEPS = {"after-intent": ("after-intent", 2), "after-events": ("after-events", 2),
         "mid-hits": ("wrote stats.daily", 2),    # stats.daily only
         "mid-dims": ("wrote dims.hourly", 2),    # dims.hourly only
         "after-hits": ("after-hits", 2), "after-commit": ("after-commit", 2)}


@pytest.mark.parametrize("mode", ["batch", "follow"])
@pytest.mark.parametrize("step", list(STEPS))
def test_a_crash_at_any_step_of_a_flush_then_a_rerun_counts_each_line_once(
        tmp_path, step, mode):
    lines = 2_000
    log = tmp_path / "access.log"
    append(log, 0, lines)
    store = str(tmp_path / "store")
    args = ["--site", "logs", "--store", store, str(log)]
    kill_at(*STEPS[step], *args, *{"batch": ["--jobs", "1"], "follow": ["--follow"]}[mode])
    daily, _, events = stored_counts(store)
    assert 0 < daily["*"] < lines     # it did die mid-file
    assert 0 < events < lines
    db = queries.connect(store, read_only=True)
    left = checkpoint(db)
    db.client.close()
    assert left["state"] == ("done" if step == "after-commit" else "flushing")
    assert left["seq"] == 2 and left["position"]["line"] == (1_000 if step == "after-commit"
                                                             else 500)

    rerun = ingest_cli(*args)
    assert rerun.exit_code == 0, rerun.output
    assert ("completed the flush a stopped run left unfinished" in rerun.output) == \
        (step != "after-commit")
    assert "resuming after line 1,000 (byte" in rerun.output
    daily, monthly, events = stored_counts(store)
    assert daily == monthly == expected(sent(lines))
    assert events == lines
    db = queries.connect(store, read_only=True)
    try:                                # the dimension counters: each line once too
        assert sum(doc["hits"] for doc in db["dims.monthly"].find()) == lines
        assert sum(doc["hits"] for doc in db["dims.hourly"].find()) == lines
        assert checkpoint(db)["totals"] == {"lines": lines, "hits": lines}   # the Data page's
        # one person, a page a second: one visit of every line, counted once
        visits = visit_reads.totals(db, "logs", START - dt.timedelta(hours=1),
                                    START + dt.timedelta(days=1))
        assert (visits.visits, visits.pageviews, visits.views, visits.duration_ms) == \
            (1, lines, lines, (lines - 1) * 1000)
    finally:
        db.client.close()

    again = ingest_cli(*args)          # complete and unchanged: nothing new
    assert again.exit_code == 0, again.output
    assert (f"already ingested up to line 2,000 (byte {lines * LINE:,}); use --from-start "
            "to ingest it again") in again.output
    assert "lines     0" in again.stdout
    assert stored_counts(store) == (daily, monthly, lines)


def test_from_start_counts_a_file_again_and_an_appended_file_resumes(tmp_path):
    log = tmp_path / "access.log"
    append(log, 0, 300)
    store = str(tmp_path / "store")
    args = ["--site", "logs", "--store", store, str(log)]
    assert ingest_cli(*args).exit_code == 0
    append(log, 300, 400)
    more = ingest_cli(*args)
    assert more.exit_code == 0 and "lines     100" in more.stdout
    assert "resuming after line 300" in more.output
    assert stored_counts(store) == (expected(sent(400)), expected(sent(400)), 400)

    again = ingest_cli("--from-start", *args)
    assert again.exit_code == 0, again.output
    assert "ingesting it again from the start (--from-start)" in again.output
    assert "lines     400" in again.stdout and "events    400 written" in again.stdout
    twice = expected(sent(400)) + expected(sent(400))
    assert stored_counts(store) == (twice, twice, 800)    # events too: a new pass


def crash_in_second_flush(log: Path, store: str) -> None:
    kill_at("after-hits", 2, "--site", "logs", "--jobs", "1", "--store", store, str(log))


@pytest.mark.parametrize("rotated", ["kept", "deleted"])
def test_an_interrupted_flush_is_completed_from_the_rotated_file(tmp_path, rotated):
    """The file was rotated while ingest was down: the interrupted flush is read again
    from ``access.log.1`` (found by device and inode), the new file from its start; a
    rotated file already deleted cannot be, and the run says so."""
    log, store = tmp_path / "access.log", str(tmp_path / "store")
    append(log, 0, 2_000)
    crash_in_second_flush(log, store)
    log.rename(tmp_path / "access.log.1")
    if rotated == "deleted":
        (tmp_path / "access.log.1").unlink()
    append(log, 5_000, 5_100)
    rerun = ingest_cli("--site", "logs", "--store", store, str(log))
    daily, monthly, events = stored_counts(store)
    new = Counter(f"/p{i % PAGES}" for i in range(5_000, 5_100))
    if rotated == "kept":
        assert rerun.exit_code == 0, rerun.output
        assert "completed the flush a stopped run left unfinished" in rerun.output
        assert daily == monthly == expected(sent(1_000) + new)
        assert events == 1_100
    else:
        assert rerun.exit_code == 1
        assert (f"bytes {500 * LINE:,}-{1_000 * LINE:,} of an interrupted flush cannot be "
                "read again (the file is gone)") in rerun.output
        assert "completed the flush" not in rerun.output
        # Here the crash came after the hits (c), so they happen to be all there.
        assert daily == monthly == expected(sent(1_000) + new) and events == 1_100


def test_an_interrupted_flush_is_completed_only_with_the_options_that_began_it(tmp_path):
    log, store = tmp_path / "access.log", str(tmp_path / "store")
    append(log, 0, 2_000)
    crash_in_second_flush(log, store)
    other = ingest_cli("--site", "other", "--store", store, str(log))
    assert other.exit_code == 1
    assert "run it again with them to complete that batch" in other.output
    assert "'site': 'logs'" in other.output
    rerun = ingest_cli("--site", "logs", "--store", store, str(log))
    assert rerun.exit_code == 0, rerun.output
    daily, monthly, events = stored_counts(store)
    assert daily == monthly == expected(sent(2_000)) and events == 2_000


