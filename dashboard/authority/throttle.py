"""Failed authentication, counted per client address, so a short admin token cannot be
guessed online: after ``LIMIT`` failures in ``WINDOW`` seconds an address is refused
(429) until its oldest failure leaves the window.

Memory is bounded: at most ``max_clients`` addresses are remembered, the least recently
failing forgotten first. An IPv6 client counts by its /64, which one host usually holds
whole. Counts live in the server process: with several workers an address may try
``LIMIT`` times in each.
"""

from __future__ import annotations

import ipaddress
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

LIMIT = 5
WINDOW = 15 * 60
MAX_CLIENTS = 10_000


def client_key(address: str | None) -> str:
    """Who a failure is counted against: the address, or its /64 for IPv6."""
    try:
        parsed = ipaddress.ip_address(address or "")
    except ValueError:
        return address or "?"
    if parsed.version == 4:
        return str(parsed)
    if parsed.ipv4_mapped is not None:             # ::ffff:192.0.2.1 is 192.0.2.1
        return str(parsed.ipv4_mapped)
    return str(ipaddress.ip_network(f"{parsed}/64", strict=False))


class FailureThrottle:
    def __init__(self, limit: int = LIMIT, window: float = WINDOW,
                 max_clients: int = MAX_CLIENTS, clock: Callable[[], float] = time.monotonic):
        self.limit = limit
        self.window = window
        self.max_clients = max_clients
        self._clock = clock
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def retry_after(self, address: str | None) -> int:
        """Seconds until ``address`` may try again; 0 when it may now."""
        key = client_key(address)
        with self._lock:
            times = self._recent(key)
            if times is None or len(times) < self.limit:
                return 0
            return max(1, round(times[0] + self.window - self._clock()))

    def fail(self, address: str | None) -> None:
        key = client_key(address)
        with self._lock:
            times = self._recent(key) or deque(maxlen=self.limit)
            times.append(self._clock())
            self._failures[key] = times
            self._failures.move_to_end(key)
            while len(self._failures) > self.max_clients:
                self._failures.popitem(last=False)

    def forgive(self, address: str | None) -> None:
        """A success: the address starts afresh."""
        with self._lock:
            self._failures.pop(client_key(address), None)

    def __len__(self) -> int:
        return len(self._failures)

    def _recent(self, key: str) -> deque[float] | None:
        times = self._failures.get(key)
        if times is None:
            return None
        horizon = self._clock() - self.window
        while times and times[0] <= horizon:
            times.popleft()
        if not times:
            del self._failures[key]
            return None
        return times
