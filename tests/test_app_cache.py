"""dashboard.cache: results shared per bucket, computed once however many viewers ask."""

import datetime as dt
import threading
import time

import pytest

from dashboard.cache import ResultCache, bucket_start


def test_bucket_start_floors_to_the_bucket():
    moment = dt.datetime(2026, 11, 21, 13, 45, 17, 500_000, tzinfo=dt.UTC).timestamp()
    assert bucket_start(60, moment) == dt.datetime(2026, 11, 21, 13, 45, tzinfo=dt.UTC)
    assert bucket_start(2, moment) == dt.datetime(2026, 11, 21, 13, 45, 16, tzinfo=dt.UTC)


def test_a_result_is_computed_once_then_served():
    cache = ResultCache()
    calls = []
    for _ in range(3):
        assert cache.get_or_compute(("q", 1), lambda: calls.append(1) or "value", 60) == "value"
    assert len(calls) == 1
    assert (cache.hits, cache.misses) == (2, 1)


def test_falsy_results_are_cached_too():
    cache = ResultCache()
    calls = []
    for _ in range(2):
        assert cache.get_or_compute(("empty",), lambda: calls.append(1) or [], 60) == []
    assert len(calls) == 1


def test_concurrent_viewers_share_one_computation():
    cache = ResultCache()
    calls = []
    started = threading.Barrier(20)

    def slow():
        calls.append(1)
        time.sleep(0.2)
        return 42

    results = []

    def viewer():
        started.wait()
        results.append(cache.get_or_compute(("slow",), slow, 60))

    threads = [threading.Thread(target=viewer) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [42] * 20
    assert len(calls) == 1


def test_failures_are_not_cached():
    cache = ResultCache()

    def fail():
        raise ValueError("down")

    with pytest.raises(ValueError):
        cache.get_or_compute(("f",), fail, 60)
    assert cache.get_or_compute(("f",), lambda: "up", 60) == "up"


def test_a_stale_result_is_served_at_once_while_the_new_one_is_computed():
    cache = ResultCache()
    assert cache.get_or_refresh(("live",), 10, lambda: "as of 10", 60) == "as of 10"
    release = threading.Event()

    def slow():
        release.wait(5)
        return "as of 11"

    assert cache.get_or_refresh(("live",), 11, slow, 60) == "as of 10"
    assert cache.stale == 1
    release.set()
    deadline = time.monotonic() + 5
    while cache.get_or_refresh(("live",), 11, slow, 60) != "as of 11":
        assert time.monotonic() < deadline, "the background refresh never landed"
        time.sleep(0.01)


def test_a_result_older_than_max_stale_is_recomputed_while_the_viewer_waits():
    cache = ResultCache()
    cache.get_or_refresh(("live",), 10, lambda: "as of 10", 60)
    assert cache.get_or_refresh(("live",), 12, lambda: "as of 12", 60, max_stale=1) == "as of 12"
    assert cache.stale == 0


def test_a_failed_background_refresh_keeps_the_last_result():
    cache = ResultCache()
    cache.get_or_refresh(("live",), 10, lambda: "as of 10", 60)

    def fail():
        raise RuntimeError("database down")

    assert cache.get_or_refresh(("live",), 11, fail, 60) == "as of 10"
    time.sleep(0.1)
    with pytest.raises(RuntimeError):
        cache.get_or_refresh(("live",), 12, fail, 60, max_stale=0)
