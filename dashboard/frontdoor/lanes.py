"""Ordinary threads that run calls for the greenlets of gevent's hub.

gevent's own ``ThreadPool`` costs the hub ~55 µs a call (a condition variable and an
async watcher per task, in Python); on a 2-core machine serving ~1,500 requests a second
that was a tenth of the hub's time. Here a task goes through a C ``SimpleQueue``, and
results come back through one async watcher, drained in a batch.
"""

from __future__ import annotations

import collections
import queue
import threading
from collections.abc import Callable
from typing import Any

from gevent.event import AsyncResult
from gevent.hub import get_hub


class Lane:
    """``threads`` threads taking calls in turn; ``run`` blocks only its greenlet."""

    def __init__(self, threads: int, name: str):
        self._tasks: queue.SimpleQueue = queue.SimpleQueue()
        self._done: collections.deque = collections.deque()
        self._watcher = get_hub().loop.async_()
        self._watcher.start(self._deliver)
        self._threads = [threading.Thread(target=self._work, name=f"{name}-{i}", daemon=True)
                         for i in range(threads)]
        for thread in self._threads:
            thread.start()

    def run(self, fn: Callable[..., Any], *args) -> Any:
        """``fn(*args)`` in one of the threads: its result, or its exception raised."""
        waiter = AsyncResult()
        self._tasks.put((waiter, fn, args))
        return waiter.get()

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
