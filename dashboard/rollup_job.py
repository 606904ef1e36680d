"""The server's rollup job: ``run_rollups`` every ``rollup_interval`` seconds on a thread,
and on demand ("run now" on the Rollups page); each run then expires the raw events it
has read that are older than ``events_ttl_days``. One run at a time per process; a run is
safe to repeat or interrupt (see ``queries/rollups/build.py``), so stopping mid-run is fine."""

from __future__ import annotations

import logging
import threading

import flask

from queries.events.collection import ensure_event_indexes
from queries.rollups.build import RollupRun, run_rollups

from .services import Services

log = logging.getLogger(__name__)
EXTENSION_KEY = "hitboard.rollups"


class RollupJob:
    def __init__(self, db, interval: float, retention: int):
        self.db = db
        self.interval = interval
        self.retention = retention
        self.last: RollupRun | None = None
        self.last_error = ""
        self.restarts = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def run_now(self) -> RollupRun:
        """One run, waiting for a run in progress to end first; raises its error."""
        with self._lock:
            try:
                self.last = run_rollups(self.db, retention=self.retention)
                self.last_error = ""
            except Exception as exc:
                self.last_error = f"{type(exc).__name__}: {exc}"
                raise
            return self.last

    def start(self) -> None:
        if self.interval > 0:
            self._thread = threading.Thread(target=self._loop, name="hitboard-rollups",
                                            daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.run_now()
            except Exception:  # logged and shown on the page; the next tick tries again
                log.exception("rollup run failed")

    def revive(self) -> bool:
        """Start the job's thread again if it stopped; True if it did."""
        if self._thread is None or self._thread.is_alive() or self._stop.is_set():
            return False
        self.restarts += 1
        log.error("the rollup job's thread had stopped: started again")
        self.start()
        return True

    def problems(self) -> list[str]:
        if self._thread is not None and not self._thread.is_alive() and not self._stop.is_set():
            return ["RollupJob: its thread is down"]
        return []

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30)


def register_rollups(server: flask.Flask, services: Services) -> None:
    if services.settings.readonly:
        return
    ensure_event_indexes(services.db)
    job = RollupJob(services.db, services.settings.rollup_interval,
                    services.settings.events_ttl_days)
    server.extensions[EXTENSION_KEY] = job
    job.start()
    services.watch(job)
    services.on_close(job.stop)


def rollup_job(server: flask.Flask | None = None) -> RollupJob | None:
    """The job of ``server`` (default: the current app), None on a read-only server."""
    app = server if server is not None else flask.current_app
    return app.extensions.get(EXTENSION_KEY)
