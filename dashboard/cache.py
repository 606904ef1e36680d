"""Query results shared by every viewer of a process, per time bucket.

A result is keyed by the query, its arguments and the current time bucket (a minute for
history, a second or two for the live page), and callers compute "now" from the bucket,
so every viewer polling in the same bucket gets the very same answer. Only one thread
computes a missing entry; the others wait for it (single flight), so 50 viewers whose
refreshes line up still cost one query per bucket, not 50.

The results held weigh at most ``max_bytes`` (their pickles: :mod:`dashboard.lru`), the
least recently used evicted first: strangers asking for distinct views (ranges, zones,
pages, filters) cannot grow the process past it.

The live page goes one step further (:meth:`ResultCache.get_or_refresh`): when the new
bucket's result is not there yet, viewers get the previous bucket's at once while one
background thread computes the new one, so no viewer waits for the database.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable, Hashable
from typing import TypeVar

from .lru import ByteBoundedStore

T = TypeVar("T")
MAX_BYTES = 64 * 1024 ** 2      # the ``cache_max_bytes`` setting's default
log = logging.getLogger(__name__)


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
