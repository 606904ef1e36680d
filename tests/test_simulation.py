"""The seeded fault simulator (tests/simrun.py): hitboard's writers driven through lost
replies, lost requests, timeouts, resets, a full disk, store restarts, killed writers
and clock jumps, then checked against the truth of what they acknowledged.

``HITBOARD_SIM_SEED=N pytest tests/test_simulation.py`` replays schedule N alone;
``HITBOARD_SIM_SCHEDULES`` sets how many the suite runs (200); ``scripts/simulate.sh``
searches further. A seed that found a bug stays below as a test of its own."""

from __future__ import annotations

import logging
import os

import pytest
from simrun import run

SEED = os.environ.get("HITBOARD_SIM_SEED")
SCHEDULES = int(os.environ.get("HITBOARD_SIM_SCHEDULES", "200"))


@pytest.fixture
def quiet():
    """The writers log every failed flush; a schedule makes hundreds on purpose."""
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


def _wire(request) -> str | None:
    try:
        return request.getfixturevalue("wire_uri")
    except pytest.skip.Exception:
        return None


@pytest.mark.parametrize("seed", [int(SEED)] if SEED else range(SCHEDULES))
def test_schedule(seed, tmp_path, request, quiet):
    outcome = run(seed, tmp_path, _wire(request))
    assert not outcome.problems, outcome.report()


def _replay(seed: int, scenario: str, tmp_path) -> None:
    outcome = run(seed, tmp_path, scenario=scenario)
    assert not outcome.problems, outcome.report()


def test_seed_4_events_of_a_flush_past_its_first_failed_batch_are_kept(tmp_path, quiet):
    """A disk full during a threaded EventWriter's flush of more than one batch: the
    first batch was kept for the retry, the later ones were dropped (acknowledged
    beacon events lost after any outage longer than a batch, 1,000 events)."""
    _replay(4, "recorders", tmp_path)


def test_seed_54_a_flush_rolled_back_whole_is_retried_whole(tmp_path, quiet):
    """Ingest flushes in one transaction of the embedded store (``atomic``): a write
    failing after others of the batch had been applied rolled them all back, yet the
    engine had dropped those from the batch, so its retry (``--follow``'s, a close's)
    never wrote them: hits lost."""
    _replay(54, "ingest", tmp_path)


def test_seed_9_a_follower_retrying_a_flush_written_in_part_does_not_stop(tmp_path, quiet):
    """The dimensions of a batch written, its hits not: ``--follow`` flushed both again
    with the same number, and the dimension recorder refused it ("flush number N must
    exceed the last one used, N"), stopping the follower on a store failure it should
    wait out."""
    _replay(9, "ingest", tmp_path)


def test_seed_0_a_follow_started_on_an_empty_log_counts_it_once(tmp_path, quiet):
    """``--follow`` started on an empty file (just rotated) saved its position with the
    empty file's head; the next run took the grown file for another one and counted
    it again from its first line."""
    _replay(0, "ingest", tmp_path)
