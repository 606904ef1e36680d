"""The server's generator: one per server, read-only refusal, rate cap, backfill, demo."""

import datetime as dt
import time

import pytest

import queries
from dashboard.loadgen import demo
from dashboard.loadgen.control import Config, GenerationDisabledError, LoadGenerator
from queries import HitboardError, InvalidRangeError
from queries.stats.sites import site_settings

SMALL = Config(rate=200, sites=1, pages=3, diurnal=0.0)


@pytest.fixture
def generator(embedded_db):
    recorder = queries.HitRecorder(embedded_db, flush_interval=0.2)
    gen = LoadGenerator(embedded_db, recorder, max_rate=1_000)
    yield gen
    gen.close()
    recorder.close()


def wait_for(predicate, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def test_start_stop_are_idempotent_and_counts_survive_restarts(generator):
    assert generator.start(SMALL)
    assert not generator.start(SMALL)
    wait_for(lambda: generator.status().hits_sent > 0)
    assert generator.status().running
    assert generator.stop()
    assert not generator.stop()
    stopped = generator.status()
    assert not stopped.running and stopped.achieved == 0.0
    assert generator.start(SMALL)
    wait_for(lambda: generator.status().hits_sent > stopped.hits_sent)
    assert queries.synthetic_sites(generator.db) == ["shop.example"]


def test_a_running_generator_changes_rate_in_place_and_restarts_for_new_pages(generator):
    generator.start(SMALL)
    runner = generator._runner
    assert not generator.start(Config(rate=500, sites=1, pages=3, diurnal=0.0))
    assert generator._runner is runner and runner.rate == 500
    assert generator.start(Config(rate=500, sites=2, pages=3, diurnal=0.0))
    assert generator._runner is not runner and not runner.running
    assert generator.status().sites == ("shop.example", "blog.example")


def test_the_rate_is_capped_by_the_setting(generator):
    with pytest.raises(InvalidRangeError, match="1,000"):
        generator.start(Config(rate=1_001))
    generator.start(SMALL)
    with pytest.raises(InvalidRangeError):
        generator.set_rate(5_000)
    generator.spike()
    assert generator.status().target_now == 1_000
    assert LoadGenerator(generator.db, generator.recorder, max_rate=10**6).max_rate == 20_000


def test_spike_needs_a_running_generator(generator):
    with pytest.raises(HitboardError, match="start the generator"):
        generator.spike()


def test_read_only_refuses_every_write_and_says_why(embedded_db):
    gen = LoadGenerator(embedded_db, None, readonly=True)
    assert "HITBOARD_READONLY=1" in gen.disabled_reason
    for action in (lambda: gen.start(SMALL), lambda: gen.set_rate(10), gen.spike,
                   lambda: gen.backfill(3)):
        with pytest.raises(GenerationDisabledError, match="read-only"):
            action()
    assert not gen.status().enabled
    assert "read-only" in demo.start_demo(gen)
    assert embedded_db["stats.daily"].count_documents({}) == 0


def test_backfill_runs_in_the_background_with_progress(generator):
    now = dt.datetime(2026, 11, 21, 12, tzinfo=dt.UTC)
    seen = []
    assert generator.backfill(3, Config(rate=1, sites=2, pages=3), now=now,
                              progress=lambda done, total: seen.append(done), wait=True)
    state = generator.status().backfill
    assert (state.running, state.done, state.total, state.error) == (False, 8, 8, "")
    assert state.hits == sum(
        int(queries.daily_series(generator.db, site, now.replace(hour=0) - dt.timedelta(days=3),
                                 now)["*"].sum())                   # 3 whole days and today
        for site in ("shop.example", "blog.example"))
    assert seen[-1] == 8
    with pytest.raises(InvalidRangeError):
        generator.backfill(401)


def test_demo_backfills_an_empty_store_then_only_starts_traffic(generator, monkeypatch):
    monkeypatch.setattr(demo, "DEMO_DAYS", 2)
    first = demo.start_demo(generator)
    assert "backfilled 2 days" in first and "live traffic" in first
    assert generator.status().running
    history = generator.status().backfill.hits
    assert history > 0
    generator.close()                     # a shutdown is not a Stop: the next start runs
    second = demo.start_demo(generator)
    assert "backfilled" not in second and "live traffic at" in second
    assert generator.status().running
    assert generator.status().backfill.hits == history
    for site in generator.status().sites:     # what the demo's custom events convert
        assert [g.label for g in site_settings(generator.db, site).goals] == [
            "Purchase", "Add to cart", "Visit /blog/*"]


def test_demo_remembers_a_stop_across_restarts(embedded_db, monkeypatch):
    """Stop pressed, server restarted with --demo: traffic stays stopped until Start."""
    monkeypatch.setattr(demo, "DEMO_DAYS", 1)
    recorder = queries.HitRecorder(embedded_db, flush_interval=0.2)
    first = LoadGenerator(embedded_db, recorder, max_rate=1_000)
    demo.start_demo(first)
    assert first.stop()                   # the presenter's Stop
    first.close()
    restarted = LoadGenerator(embedded_db, recorder, max_rate=1_000)
    try:
        said = demo.start_demo(restarted)
        assert "left stopped" in said and not restarted.status().running
        restarted.start(SMALL)            # Start on the page: the next restart runs again
        restarted.close()
        assert "live traffic at" in demo.start_demo(restarted)
        assert restarted.status().running
    finally:
        restarted.close()
        recorder.close()
