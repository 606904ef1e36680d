"""Query results shared by every viewer of a process, per time bucket.

A result is keyed by the query, its arguments and the current time bucket (a minute for
history, a second or two for the live page), and callers compute "now" from the bucket,
so every viewer polling in the same bucket gets the very same answer. Only one thread
computes a missing entry; the others wait for it (single flight), so 50 viewers whose
refreshes line up still cost one query per bucket, not 50.

The results held weigh at most ``max_bytes``, the least recently used evicted first:
strangers asking for distinct views (ranges, zones, pages, filters) cannot grow the
process past it. A minute-level chart pickles to 0.1–2 MB: a bound on entries alone (2,000)
let such a flood grow a worker by a gigabyte. Each entry costs its pickled bytes plus its
key (and ``ENTRY_OVERHEAD`` for the objects holding them). Values are kept pickled, as
flask-caching's SimpleCache kept them, so the count is exact and every reader gets its
own copy.

The live page goes one step further (:meth:`ResultCache.get_or_refresh`): when the new
bucket's result is not there yet, viewers get the previous bucket's at once while one
background thread computes the new one, so no viewer waits for the database.
"""

from __future__ import annotations

import datetime as dt
import logging
import pickle
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")
MAX_BYTES = 64 * 1024 ** 2      # the ``cache_max_bytes`` setting's default
ENTRY_OVERHEAD = 256            # the dict slot, the tuple, the bytes and str headers of an entry
SWEEP_EVERY = 10.0              # seconds between sweeps of expired entries
log = logging.getLogger(__name__)


class ByteBoundedStore:
    """``get``/``set``/``clear`` of values with a timeout; ``bytes`` never exceeds
    ``max_bytes``. A value larger than the whole bound is not stored (``refused``)."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.bytes = 0
        self.evicted = 0
        self.refused = 0
        self._entries: OrderedDict[str, tuple[float, bytes, int]] = OrderedDict()
        self._lock = threading.Lock()
        self._swept = time.time()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, name: str) -> Any:
        """The value stored under ``name``, or None (absent or expired)."""
        with self._lock:
            self._sweep_if_due(time.time())
            found = self._entries.get(name)
            if found is None:
                return None
            if found[0] <= time.time():
                self._drop(name)
                return None
            self._entries.move_to_end(name)
            blob = found[1]
        return pickle.loads(blob)

    def set(self, name: str, value: Any, timeout: float) -> bool:
        """Store ``value`` for ``timeout`` seconds, evicting the least recently used
        entries past the bound; False when the value alone is larger than the bound."""
        blob = pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
        size = len(blob) + len(name) + ENTRY_OVERHEAD
        now = time.time()
        with self._lock:
            self._drop(name)
            if size > self.max_bytes:
                self.refused += 1
                return False
            self._sweep_if_due(now)
            while self.bytes + size > self.max_bytes:
                self._drop(next(iter(self._entries)))
                self.evicted += 1
            self._entries[name] = (now + timeout, blob, size)
            self.bytes += size
        return True

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.bytes = 0

    def _drop(self, name: str) -> None:
        found = self._entries.pop(name, None)
        if found is not None:
            self.bytes -= found[2]

    def sweep(self) -> None:
        """Drop every expired entry now (a server's watcher calls it while no one asks)."""
        with self._lock:
            self._sweep_if_due(time.time(), every=0.0)

    def _sweep_if_due(self, now: float, every: float = SWEEP_EVERY) -> None:
        """Every ``every`` seconds, drop every expired entry: what no one asks for again
        leaves within its timeout (and a sweep), not when newer entries push it out."""
        if now - self._swept < every:
            return
        self._swept = now
        for name in [n for n, (expires, _, _) in self._entries.items() if expires <= now]:
            self._drop(name)


def bucket_start(seconds: int, now: float | None = None) -> dt.datetime:
    """The start of the current ``seconds``-long bucket, as an aware UTC datetime."""
    now = time.time() if now is None else now
    return dt.datetime.fromtimestamp(now // seconds * seconds, dt.UTC)


class ResultCache:
    def __init__(self, max_bytes: int = MAX_BYTES):
        self._backend = ByteBoundedStore(max_bytes)
        self._guard = threading.Lock()
        self._inflight: dict[str, threading.Lock] = {}
        self._refreshing: set[str] = set()
        self.hits = 0
        self.misses = 0
        self.stale = 0

    def get_or_compute(self, key: tuple[Hashable, ...], compute: Callable[[], T],
                       timeout: int) -> T:
        """The cached value of ``key``, else ``compute()`` stored for ``timeout`` seconds.
        Exceptions are not cached: the next viewer tries again."""
        return self._get_or_compute(repr(key), 0, compute, timeout)

    def get_or_refresh(self, key: tuple[Hashable, ...], bucket: int, compute: Callable[[], T],
                       timeout: int, max_stale: int = 3) -> T:
        """The value of ``key`` for time bucket ``bucket``. When the cached value is from
        an earlier bucket (at most ``max_stale`` buckets old), it is returned at once and
        a background thread computes ``compute()`` for this bucket (stale while
        revalidate); older or missing values are computed in the caller's thread."""
        name = repr(key)
        found = self._backend.get(name)
        if found is not None:
            computed_for, value = found
            if computed_for >= bucket:
                self.hits += 1
                return value
            if bucket - computed_for <= max_stale:
                self.stale += 1
                self._refresh_in_background(name, bucket, compute, timeout)
                return value
        return self._get_or_compute(name, bucket, compute, timeout)

    def _get_or_compute(self, name: str, bucket: int, compute: Callable[[], T],
                        timeout: int) -> T:
        """Single flight: one thread computes, the others wait for its result."""
        found = self._backend.get(name)
        if found is not None and found[0] >= bucket:
            self.hits += 1
            return found[1]
        with self._guard:
            flight = self._inflight.setdefault(name, threading.Lock())
        with flight:
            found = self._backend.get(name)
            if found is not None and found[0] >= bucket:
                self.hits += 1
                return found[1]
            try:
                value = compute()
                self._backend.set(name, (bucket, value), timeout)
                self.misses += 1
            finally:
                with self._guard:
                    self._inflight.pop(name, None)
        return value

    def _refresh_in_background(self, name: str, bucket: int, compute: Callable[[], T],
                               timeout: int) -> None:
        with self._guard:
            if name in self._refreshing:
                return
            self._refreshing.add(name)

        def refresh():
            try:
                self._get_or_compute(name, bucket, compute, timeout)
            except Exception:
                log.exception("background refresh of %s failed; viewers keep the last result",
                              name)
            finally:
                with self._guard:
                    self._refreshing.discard(name)

        threading.Thread(target=refresh, name="hitboard-refresh", daemon=True).start()

    @property
    def bytes(self) -> int:
        """The bytes the cached results hold (their pickles and keys): at most ``max_bytes``."""
        return self._backend.bytes

    @property
    def max_bytes(self) -> int:
        return self._backend.max_bytes

    def __len__(self) -> int:
        return len(self._backend)

    def sweep(self) -> None:
        """Let expired results go, even while no viewer asks for anything."""
        self._backend.sweep()

    def clear(self) -> None:
        self._backend.clear()
