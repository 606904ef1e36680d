"""The server's notification job: ``queries.notify.jobs.run_due`` every
``notify_interval`` seconds on a thread, started like the rollup job (none on a
``--readonly`` server, none at 0). Every send is claimed in the store first, so the
thread of each worker process and a cron's ``hitboard notify run`` never send twice."""

from __future__ import annotations

import datetime as dt

import flask

from queries.notify import jobs
from queries.notify.deliveries import ensure_notify_indexes

from ..periodic import PeriodicJob
from ..services import Services
from .context import NotifyContext

EXTENSION_KEY = "hitboard.notify"


class NotifyJob(PeriodicJob):
    name = "notify"

    def __init__(self, context: NotifyContext, interval: float):
        super().__init__(interval)
        self.context = context
        self.runs = 0

    def run_now(self, now: dt.datetime | None = None) -> None:
        jobs.run_due(self.context, now or dt.datetime.now(dt.UTC))
        self.runs += 1


def register_notify(server: flask.Flask, services: Services) -> None:
    if services.settings.readonly:
        return
    ensure_notify_indexes(services.db)
    job = NotifyJob(NotifyContext(services.db, services.settings),
                    services.settings.notify_interval)
    job.install(server, services, EXTENSION_KEY)


def notify_job(server: flask.Flask | None = None) -> NotifyJob | None:
    app = server if server is not None else flask.current_app
    return app.extensions.get(EXTENSION_KEY)
