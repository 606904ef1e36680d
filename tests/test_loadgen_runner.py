"""The runner: rate accuracy in simulated time, determinism, spikes, errors, start/stop."""

import datetime as dt
import time

import pytest

import queries
from queries import InvalidRangeError, RecorderOverloadedError
from queries.loadgen import LoadRunner, TrafficModel
from queries.loadgen.runner import MAX_STEP_S, SPIKE_FACTOR, SPIKE_SECONDS
from queries.stats.writes import RecorderStatus

NOON = dt.datetime(2026, 11, 21, 12, tzinfo=dt.UTC)


class FakeRecorder:
    def __init__(self, refuse=False):
        self.calls = []
        self.refuse = refuse

    def add_pending(self, pending, bots=None):
        """The count step's hits, a call per page and minute."""
        if self.refuse:
            raise RecorderOverloadedError("full")
        for (site, page, *day), minutes in pending.items():
            self.calls.extend((site, page, (*day, minute), n) for minute, n in minutes.items())

    def status(self):
        return RecorderStatus(db_operations=len(self.calls))


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def simulate(runner, clock, seconds, tick=0.1):
    runner.step(clock.now)
    for _ in range(round(seconds / tick)):
        clock.now += tick
        runner.step(clock.now)


def make(rate, recorder=None, diurnal=0.0, seed=1, **kwargs):
    clock = Clock()
    runner = LoadRunner(recorder or FakeRecorder(), TrafficModel(diurnal=diurnal, seed=seed),
                        rate, clock=clock, wall=lambda: NOON, **kwargs)
    return runner, clock


@pytest.mark.parametrize("rate", [1, 100, 1_000, 20_000])
def test_hits_generated_match_the_target_rate(rate):
    runner, clock = make(rate)
    simulate(runner, clock, seconds=max(20.0, 2000 / rate))
    assert runner.expected_hits == pytest.approx(rate * clock.now)
    assert runner.hits_sent == pytest.approx(runner.expected_hits, rel=0.05)
    assert sum(n for *_, n in runner.recorder.calls) == runner.hits_sent


def test_coinciding_hits_are_recorded_once_per_page_and_tick():
    runner, clock = make(20_000)
    simulate(runner, clock, seconds=1.0)
    cells = len(runner.model.cells())
    assert len(runner.recorder.calls) <= 11 * cells
    assert max(n for *_, n in runner.recorder.calls) > 1


def test_achieved_rate_is_reported_over_the_recent_window():
    runner, clock = make(1_000)
    simulate(runner, clock, seconds=10)
    assert runner.status().achieved == 0.0  # not running: nothing is being achieved
    assert runner.status().hits_sent == runner.hits_sent
    window = list(runner._window)
    span = window[-1][0] - window[0][0]
    assert sum(n for _, n, _ in window[1:]) / span == pytest.approx(1_000, rel=0.05)


def test_same_seed_same_hits():
    a, clock_a = make(500, seed=4)
    b, clock_b = make(500, seed=4)
    c, clock_c = make(500, seed=5)
    for runner, clock in ((a, clock_a), (b, clock_b), (c, clock_c)):
        simulate(runner, clock, seconds=3)
    assert a.recorder.calls == b.recorder.calls
    assert a.recorder.calls != c.recorder.calls


def test_spike_multiplies_the_rate_for_thirty_seconds():
    runner, clock = make(100)
    runner.spike()
    assert runner.target_now() == pytest.approx(100 * SPIKE_FACTOR)
    simulate(runner, clock, seconds=SPIKE_SECONDS)
    spiked = runner.hits_sent
    assert spiked == pytest.approx(100 * SPIKE_FACTOR * SPIKE_SECONDS, rel=0.05)
    assert runner.target_now() == pytest.approx(100)
    simulate(runner, clock, seconds=10)
    assert runner.hits_sent - spiked == pytest.approx(100 * 10, rel=0.1)


def test_spike_and_diurnal_cycle_never_exceed_the_cap():
    runner, _ = make(4_000, diurnal=0.5, max_rate=6_000)
    assert runner.target_now() == pytest.approx(4_000 * runner.model.diurnal_factor(NOON))
    assert 4_000 < runner.target_now() < 6_000
    runner.spike()
    assert runner.target_now() == 6_000


def test_a_late_tick_does_not_burst_and_shows_as_a_shortfall():
    runner, clock = make(1_000)
    runner.step(0.0)
    clock.now = 5.0
    sent = runner.step(5.0)
    assert sent == pytest.approx(1_000 * MAX_STEP_S, rel=0.1)
    assert runner.expected_hits == pytest.approx(5_000)


def test_refused_hits_count_as_errors_not_as_sent():
    runner, clock = make(1_000, recorder=FakeRecorder(refuse=True))
    simulate(runner, clock, seconds=1)
    assert runner.hits_sent == 0
    assert runner.errors == pytest.approx(1_000, rel=0.1)
    assert runner.status().last_error == "full"


@pytest.mark.parametrize("rate", [0, 20_001, "fast", True])
def test_rate_out_of_range_is_refused(rate):
    with pytest.raises(InvalidRangeError):
        make(rate)
    runner, _ = make(10)
    with pytest.raises(InvalidRangeError):
        runner.set_rate(rate)


def test_start_and_stop_are_idempotent():
    runner = LoadRunner(FakeRecorder(), TrafficModel(), 1_000, tick=0.01)
    assert not runner.stop()
    assert runner.start()
    assert not runner.start()
    assert runner.running
    deadline = time.monotonic() + 10
    while runner.hits_sent == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert runner.stop()
    assert not runner.stop()
    assert not runner.running
    sent = runner.hits_sent
    assert sent > 0
    assert runner.status().achieved == 0.0
    assert runner.start() and runner.stop()
    assert runner.hits_sent >= sent


def test_every_hit_sent_reaches_the_store(embedded_db):
    recorder = queries.HitRecorder(embedded_db, flush_interval=3600)
    runner, clock = make(300, recorder=recorder)
    simulate(runner, clock, seconds=5)
    recorder.close()
    assert recorder.status().hits_written == runner.hits_sent
    day = NOON.replace(hour=0)
    stored = sum(queries.daily_series(embedded_db, site, day, day + dt.timedelta(days=1))
                 ["*"].sum() for site in runner.model.site_names)
    assert stored == runner.hits_sent
