"""The server's rollup job: ``run_rollups`` every ``rollup_interval`` seconds on a thread,
and on demand ("run now" on the Rollups page); each run then expires the raw events it
has read that are older than ``events_ttl_days``. One run at a time per process; a run is
safe to repeat or interrupt (see ``queries/rollups/build.py``), so stopping mid-run is fine."""

from __future__ import annotations

import threading

import flask

from queries.events.collection import ensure_event_indexes
from queries.rollups.build import RollupRun, run_rollups

from .periodic import PeriodicJob
from .services import Services

EXTENSION_KEY = "hitboard.rollups"


class RollupJob(PeriodicJob):
    name = "rollups"

    def __init__(self, db, interval: float, retention: int):
        super().__init__(interval)
        self.db = db
        self.retention = retention
        self.last: RollupRun | None = None
        self.last_error = ""
        self._lock = threading.Lock()

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


def register_rollups(server: flask.Flask, services: Services) -> None:
    if services.settings.readonly:
        return
    ensure_event_indexes(services.db)
    job = RollupJob(services.db, services.settings.rollup_interval,
                    services.settings.events_ttl_days)
    job.install(server, services, EXTENSION_KEY)


def rollup_job(server: flask.Flask | None = None) -> RollupJob | None:
    """The job of ``server`` (default: the current app), None on a read-only server."""
    app = server if server is not None else flask.current_app
    return app.extensions.get(EXTENSION_KEY)
