"""The seeded fault simulator (tests/simrun.py): hitboard's writers driven through lost
replies, lost requests, timeouts, resets, a full disk, store restarts, killed writers
and clock jumps, then checked against the truth of what they acknowledged.

``HITBOARD_SIM_SEED=N pytest tests/test_simulation.py -k test_schedule`` replays
schedule N alone (``HITBOARD_SIM_BACKEND=embedded``: on the embedded store, as
``scripts/simulate.sh`` ran it);
``HITBOARD_SIM_SCHEDULES`` sets how many the suite runs (200); ``scripts/simulate.sh``
searches further. A seed that found a bug stays below as a test of its own."""

from __future__ import annotations

import logging
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from simingest import SITE, Log
from simrun import run
from simtruth import Ledger, Truth, check

import queries

SEED = os.environ.get("HITBOARD_SIM_SEED")
SCHEDULES = int(os.environ.get("HITBOARD_SIM_SCHEDULES", "200"))


@pytest.fixture
def quiet():
    """The writers log every failed flush; a schedule makes hundreds on purpose."""
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


def _wire(request) -> str | None:
    """The wire server's URI, for the schedules that pick it (a fifth of those of
    recorders, ingest and the load generator), unless ``HITBOARD_SIM_BACKEND=embedded``
    (a seed found by ``scripts/simulate.sh``, which runs on the embedded store)."""
    if os.environ.get("HITBOARD_SIM_BACKEND") == "embedded":
        return None
    try:
        return request.getfixturevalue("wire_uri")
    except pytest.skip.Exception:
        return None


@pytest.mark.parametrize("seed", [int(SEED)] if SEED else range(SCHEDULES))
def test_schedule(seed, tmp_path, request, quiet):
    outcome = run(seed, tmp_path, _wire(request))
    assert not outcome.problems, outcome.report()


def _replay(seed: int, scenario: str, tmp_path) -> None:
    """A seed test: the scenario pinned, so scenarios added do not change it; a change
    to that scenario's draws does (find the seed again: revert the fix, search)."""
    outcome = run(seed, tmp_path, scenario=scenario)
    assert not outcome.problems, outcome.report()


def test_seed_4_events_of_a_flush_past_its_first_failed_batch_are_kept(tmp_path, quiet):
    """A disk full during a threaded EventWriter's flush of more than one batch: the
    first batch was kept for the retry, the later ones were dropped (acknowledged
    beacon events lost after any outage longer than a batch, 1,000 events)."""
    _replay(4, "recorders", tmp_path)


def test_seed_33_a_flush_rolled_back_whole_is_retried_whole(tmp_path, quiet):
    """Ingest flushes in one transaction of the embedded store (``atomic``): a write
    failing after others of the batch had been applied rolled them all back, yet the
    engine had dropped those from the batch, so its retry (``--follow``'s, a close's)
    never wrote them: hits lost."""
    _replay(33, "ingest", tmp_path)


def test_seed_28_a_follower_retrying_a_flush_written_in_part_does_not_stop(tmp_path, quiet):
    """The dimensions of a batch written, its hits not: ``--follow`` flushed both again
    with the same number, and the dimension recorder refused it ("flush number N must
    exceed the last one used, N"), stopping the follower on a store failure it should
    wait out."""
    _replay(28, "ingest", tmp_path)


def test_seed_0_a_follow_started_on_an_empty_log_counts_it_once(tmp_path, quiet):
    """``--follow`` started on an empty file (just rotated) saved its position with the
    empty file's head; the next run took the grown file for another one and counted
    it again from its first line."""
    _replay(0, "ingest", tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_ingest_processes_killed_with_sigkill(seed, tmp_path):
    """The slow tier: real ``hitboard ingest --follow`` processes killed with SIGKILL
    while the log grows (the kill lands where the seeded delay and the machine put it,
    so a seed replays the schedule, not the instant), a batch run to the end, a rollup;
    then the same checker as the simulated schedules."""
    hitboard = str(Path(sys.executable).with_name("hitboard"))
    store = str(tmp_path / "store")
    rng = random.Random(f"sigkill {seed}")
    log = Log(tmp_path / "access.log", rng)
    log.append(rng.randint(5, 40))
    for _ in range(3):
        follower = subprocess.Popen([hitboard, "ingest", "--follow", "--site", SITE,
                                     "--store", store, str(log.path)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(rng.randint(1, 4)):
            time.sleep(rng.uniform(0.05, 0.6))
            log.append(rng.randint(1, 60))
        time.sleep(rng.uniform(0.0, 1.0))
        follower.send_signal(signal.SIGKILL)
        follower.wait(30)
    for command in (["ingest", "--site", SITE, "--store", store, str(log.path)],
                    ["rollup", "--store", store]):
        done = subprocess.run([hitboard, *command], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
    db = queries.connect(store, read_only=True)
    try:
        problems = check(db, Truth(stats=Ledger(acked=log.hits), dims=Ledger(acked=log.hits),
                                   events=Ledger(acked=log.hits), values=False,
                                   rollups=Ledger(acked=log.hits), visits=(SITE, log.lines)))
    finally:
        db.client.close()
    assert not problems, "\n".join(problems)
