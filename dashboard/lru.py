"""A store of pickled results bounded in bytes, least recently used evicted first.

Every distinct URL a stranger asks for (a range, a zone, pages, a filter) makes a new
result, and a minute-level chart pickles to 0.1–2 MB: a bound on entries alone let a
flood of distinct views grow a worker by a gigabyte. Here each entry costs its pickled
bytes plus its key (and :data:`ENTRY_OVERHEAD` for the objects holding them), and the
sum never passes ``max_bytes``. Values are kept pickled, as flask-caching's SimpleCache
kept them, so the count is exact and every reader gets its own copy.
"""

from __future__ import annotations

import pickle
import threading
import time
from collections import OrderedDict
from typing import Any

ENTRY_OVERHEAD = 256    # the dict slot, the tuple, the bytes and str headers of an entry
SWEEP_EVERY = 10.0      # seconds between sweeps of expired entries


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
