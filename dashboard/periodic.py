"""A server job run every ``interval`` seconds on a daemon thread (none at 0): the
rollups and the notifications. A run that raises is logged and the next tick tries
again; a thread that died anyway is started again by the services' watch (``revive``)
and counted, so ``/healthz`` can say so."""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod

log = logging.getLogger(__name__)


class PeriodicJob(ABC):
    name = "job"                    # the thread's name is hitboard-<name>

    def __init__(self, interval: float):
        self.interval = interval
        self.restarts = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @abstractmethod
    def run_now(self):
        """One run of the job's work (the thread's tick, or asked for now)."""

    def install(self, server, services, key: str) -> None:
        """The job as ``server``'s ``key`` extension: started, watched (revived if its
        thread dies) and stopped when the app closes."""
        server.extensions[key] = self
        self.start()
        services.watch(self)
        services.on_close(self.stop)

    def start(self) -> None:
        if self.interval > 0:
            self._thread = threading.Thread(target=self._loop, name=f"hitboard-{self.name}",
                                            daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.run_now()
            except Exception:  # logged (and shown where the job has a page); next tick again
                log.exception("%s run failed", self.name)

    def revive(self) -> bool:
        """Start the job's thread again if it stopped; True if it did."""
        if self._thread is None or self._thread.is_alive() or self._stop.is_set():
            return False
        self.restarts += 1
        log.error("the %s job's thread had stopped: started again", self.name)
        self.start()
        return True

    def problems(self) -> list[str]:
        if self._thread is not None and not self._thread.is_alive() and not self._stop.is_set():
            return [f"{type(self).__name__}: its thread is down"]
        return []

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30)
