"""The shared result cache is bounded in bytes: however many distinct
results strangers ask for, what it holds never weighs more than ``cache_max_bytes``."""

from __future__ import annotations

import datetime as dt
import pickle
import random

import numpy as np
import pandas as pd
import time_machine
from clockkit import TEST_NOW

from dashboard.cache import ENTRY_OVERHEAD, MAX_BYTES, SWEEP_EVERY, ByteBoundedStore, ResultCache
from dashboard.settings import resolve


def minute_frame(pages: int, minutes: int, seed: int) -> pd.DataFrame:
    """A chart's frame: one column of counts per page, one row per minute."""
    index = pd.date_range("2015-05-17", periods=minutes, freq="min", tz="UTC")
    counts = np.random.default_rng(seed).integers(0, 5, (minutes, pages))
    return pd.DataFrame(counts, index=index, columns=[f"/page-{i}" for i in range(pages)])


def test_distinct_results_never_hold_more_than_the_bound():
    bound = 1024 ** 2
    cache = ResultCache(max_bytes=bound)
    base = minute_frame(10, 1440, 0)
    weight = len(pickle.dumps((0, base), pickle.HIGHEST_PROTOCOL))
    most = 0
    for i in range(200):
        cache.get_or_compute(("chart", "s", i), lambda i=i: base + i, 60)
        most = max(most, cache.bytes)
        assert cache.bytes <= bound
    print(f"\n200 distinct frames of {weight:,} bytes pickled: held at most {most:,} bytes "
          f"in {len(cache)} entries (bound {bound:,}, 2000 entries before)")
    assert len(cache) == bound // (weight + 40 + ENTRY_OVERHEAD)
    served = cache.get_or_compute(("chart", "s", 199), lambda: None, 60)
    pd.testing.assert_frame_equal(served, base + 199)     # the most recent: still there


def test_the_count_is_exact_and_the_least_recently_used_goes_first():
    store = ByteBoundedStore(50_000)
    rng = random.Random(4)
    for _ in range(2000):
        name = f"k{rng.randrange(300)}"
        if rng.random() < 0.3:
            store.get(name)
        else:
            store.set(name, b"x" * rng.randrange(20_000), 60)
        held = sum(size for _, _, size in store._entries.values())
        assert store.bytes == held <= store.max_bytes
    store.clear()
    for name in "abc":
        store.set(name, b"x" * 15_000, 60)
    store.get("a")                        # read: now the most recently used
    store.set("d", b"x" * 15_000, 60)
    assert store.get("b") is None and store.get("a") is not None
    assert store.evicted >= 1


def test_a_result_larger_than_the_bound_is_served_not_kept():
    cache = ResultCache(max_bytes=64 * 1024)
    frame = minute_frame(10, 1440, 1)
    assert cache.get_or_compute(("huge",), lambda: frame, 60) is frame
    assert (cache.bytes, len(cache), cache._backend.refused) == (0, 0, 1)


def test_expired_results_leave_an_idle_cache():
    with time_machine.travel(TEST_NOW, tick=False) as clock:
        store = ByteBoundedStore(10 ** 6)
        for i in range(10):
            store.set(f"k{i}", b"x" * 1000, 120)
        assert store.bytes > 10_000
        clock.shift(dt.timedelta(seconds=120 + SWEEP_EVERY))
        assert store.get("anything") is None
        assert (store.bytes, len(store)) == (0, 0)


def test_an_idle_cache_is_swept_without_a_request():
    with time_machine.travel(TEST_NOW, tick=False) as clock:
        cache = ResultCache(max_bytes=10 ** 6)
        cache.get_or_compute(("chart",), lambda: b"x" * 10_000, 120)
        clock.shift(dt.timedelta(seconds=119))
        cache.sweep()
        assert len(cache) == 1
        clock.shift(dt.timedelta(seconds=1))
        cache.sweep()
        assert (cache.bytes, len(cache)) == (0, 0)


def test_the_bound_is_a_setting():
    assert resolve({}).cache_max_bytes == MAX_BYTES == 64 * 1024 ** 2
    assert resolve({"cache_max_bytes": "8M"}).cache_max_bytes == 8 * 1024 ** 2
