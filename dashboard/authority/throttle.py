"""Failed authentication, counted per client address, so a short admin token cannot be
guessed online: after ``LIMIT`` failures in ``WINDOW`` seconds an address is refused
(429) until its oldest failure leaves the window.

Memory is bounded, and holds under rotation: at most ``max_clients`` addresses are
remembered, and one is forgotten only once its failures have left the window (forgetting
the least recently failing one would hand a locked-out address ``LIMIT`` fresh guesses
after ``max_clients`` others failed once). While the table is full, the addresses it does
not hold share one budget of ``LIMIT`` failures a window: past it they wait, whoever they
are. An IPv6 client counts by its /64, which one host usually holds whole. Counts live in
the server process: with several workers an address may try ``LIMIT`` times in each.
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
        # least recently failing first: an entry whose last failure left the window goes
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()
        self._others: deque[float] = deque(maxlen=limit)   # those a full table does not hold
        self._lock = threading.Lock()

    def retry_after(self, address: str | None) -> int:
        """Seconds until ``address`` may try again; 0 when it may now."""
        key = client_key(address)
        with self._lock:
            times = self._counted(key)
            if times is None or len(times) < self.limit:
                return 0
            return max(1, round(times[0] + self.window - self._clock()))

    def fail(self, address: str | None) -> None:
        key = client_key(address)
        with self._lock:
            times = self._counted(key)
            if times is self._others:
                times.append(self._clock())
                return
            times = times or deque(maxlen=self.limit)
            times.append(self._clock())
            self._failures[key] = times
            self._failures.move_to_end(key)

    def forgive(self, address: str | None) -> None:
        """A success: the address starts afresh."""
        with self._lock:
            self._failures.pop(client_key(address), None)

    def __len__(self) -> int:
        return len(self._failures)

    def _counted(self, key: str) -> deque[float] | None:
        """The failures ``key`` is judged by: its own (None: none in the window), or, the
        table full and ``key`` not in it, those of every address it does not hold."""
        self._forget_expired()
        times = self._recent(key)
        if times is None and len(self._failures) >= self.max_clients:
            horizon = self._clock() - self.window
            while self._others and self._others[0] <= horizon:
                self._others.popleft()
            return self._others
        return times

    def _forget_expired(self) -> None:
        """Drop the addresses whose last failure has left the window."""
        horizon = self._clock() - self.window
        while self._failures:
            times = next(iter(self._failures.values()))
            if times and times[-1] > horizon:
                break
            self._failures.popitem(last=False)

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
