"""The scheduler's due work, in order: deliveries cut off or due for a retry, then
reports, then alerts. The server's thread runs it every ``notify_interval`` seconds and
``hitboard notify run`` from a cron; every send in it is claimed first, so any number of
them may run at once. One step failing never stops the others."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable

from . import deliveries, reports
from .alerts import check as alerts

log = logging.getLogger(__name__)


def steps() -> list[tuple[str, Callable]]:
    return [("retries", deliveries.run_due), ("reports", reports.run_due),
            ("alerts", alerts.run_due)]


def run_due(services, now: dt.datetime) -> None:
    for name, step in steps():
        try:
            step(services, now)
        except Exception:
            log.exception("notifications: the %s step failed", name)
