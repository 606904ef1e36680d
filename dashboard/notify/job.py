"""The server's notification job: ``queries.notify.jobs.run_due`` every
``notify_interval`` seconds on a thread, started like the rollup job (none on a
``--readonly`` server, none at 0). Every send is claimed in the store first, so the
thread of each worker process and a cron's ``hitboard notify run`` never send twice."""

from __future__ import annotations

import datetime as dt
import logging
import threading

import flask

from queries.notify import jobs
from queries.notify.deliveries import ensure_notify_indexes

from ..services import Services
from .context import NotifyContext

log = logging.getLogger(__name__)
EXTENSION_KEY = "hitboard.notify"


class NotifyJob:
    def __init__(self, context: NotifyContext, interval: float):
        self.context = context
        self.interval = interval
        self.restarts = 0
        self.runs = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def run_now(self, now: dt.datetime | None = None) -> None:
        jobs.run_due(self.context, now or dt.datetime.now(dt.UTC))
        self.runs += 1

    def start(self) -> None:
        if self.interval > 0:
            self._thread = threading.Thread(target=self._loop, name="hitboard-notify",
                                            daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.run_now()
            except Exception:  # logged; the next tick tries again
                log.exception("notification run failed")

    def revive(self) -> bool:
        if self._thread is None or self._thread.is_alive() or self._stop.is_set():
            return False
        self.restarts += 1
        log.error("the notification job's thread had stopped: started again")
        self.start()
        return True

    def problems(self) -> list[str]:
        if self._thread is not None and not self._thread.is_alive() and not self._stop.is_set():
            return ["NotifyJob: its thread is down"]
        return []

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30)


def register_notify(server: flask.Flask, services: Services) -> None:
    if services.settings.readonly:
        return
    ensure_notify_indexes(services.db)
    job = NotifyJob(NotifyContext(services.db, services.settings),
                    services.settings.notify_interval)
    server.extensions[EXTENSION_KEY] = job
    job.start()
    services.watch(job)
    services.on_close(job.stop)


def notify_job(server: flask.Flask | None = None) -> NotifyJob | None:
    app = server if server is not None else flask.current_app
    return app.extensions.get(EXTENSION_KEY)
