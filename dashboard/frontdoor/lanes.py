"""Ordinary threads that run calls for the greenlets of gevent's hub.

gevent's own ``ThreadPool`` costs the hub ~55 µs a call (a condition variable and an
async watcher per task, in Python); on a 2-core machine serving ~1,500 requests a second
that was a tenth of the hub's time. Here a task goes through a C ``SimpleQueue``, and
results come back through one async watcher, drained in a batch.

Each lane counts the requests it holds (``InFlight``), so ``/healthz`` can say when
requests wait (a History render holding the process, a stuck store) rather than answer
ok while ``/hit`` stalls.
"""

from __future__ import annotations

import collections
import itertools
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from gevent.event import AsyncResult
from gevent.hub import get_hub


class InFlight:
    """The requests one lane holds: counted from when they are handed to it."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._since: dict[int, float] = {}
        self._tokens = itertools.count()

    def begin(self) -> int:
        token = next(self._tokens)
        self._since[token] = self._clock()
        return token

    def end(self, token: int) -> None:
        self._since.pop(token, None)

    def figures(self) -> dict:
        """``in_flight`` requests, and seconds the oldest of them has been in flight."""
        since = list(self._since.values())     # one C call: safe while the hub adds
        oldest = self._clock() - min(since) if since else 0.0
        return {"in_flight": len(since), "oldest_s": round(oldest, 3)}


LANES: dict[str, InFlight] = {}


def register(name: str, clock: Callable[[], float] = time.monotonic) -> InFlight:
    """A lane's tracker, named in ``/healthz`` (``quick``: /hit, /healthz and the
    reading of every request; ``pages``: pages and Dash callbacks)."""
    LANES[name] = tracker = InFlight(clock)
    return tracker


def waiting() -> dict[str, dict]:
    return {name: tracker.figures() for name, tracker in sorted(LANES.items())}


class Lane:
    """``threads`` threads taking calls in turn; ``run`` blocks only its greenlet."""

    def __init__(self, threads: int, name: str):
        self.in_flight = register(name)
        self._tasks: queue.SimpleQueue = queue.SimpleQueue()
        self._done: collections.deque = collections.deque()
        self._watcher = get_hub().loop.async_()
        self._watcher.start(self._deliver)
        self._threads = [threading.Thread(target=self._work, name=f"hitboard-{name}-{i}",
                                          daemon=True) for i in range(threads)]
        for thread in self._threads:
            thread.start()

    def run(self, fn: Callable[..., Any], *args) -> Any:
        """``fn(*args)`` in one of the threads: its result, or its exception raised."""
        waiter = AsyncResult()
        token = self.in_flight.begin()
        try:
            self._tasks.put((waiter, fn, args))
            return waiter.get()
        finally:
            self.in_flight.end(token)

    def close(self) -> None:
        for _ in self._threads:
            self._tasks.put(None)
        self._watcher.stop()

    def _work(self) -> None:
        while (task := self._tasks.get()) is not None:
            waiter, fn, args = task
            try:
                outcome = (True, fn(*args))
            except BaseException as exc:   # handed to the waiting greenlet, which raises it
                outcome = (False, exc)
            self._done.append((waiter, outcome))
            self._watcher.send()            # thread-safe: wakes the hub

    def _deliver(self) -> None:
        while self._done:
            waiter, (ok, value) = self._done.popleft()
            if ok:
                waiter.set(value)
            else:
                waiter.set_exception(value)
