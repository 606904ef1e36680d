"""Helpers for the alerts' tests: weeks of steady history, a services stand-in, and the
sends the checker made (``deliver`` wrapped, its claims kept)."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import numpy as np

import queries
from queries.jobs.backfill import DayCounts

PER_MINUTE = 2          # steady traffic: 30 hits in 15 minutes, a band of [30, 30]


def steady(db, site: str, day: dt.datetime, days: int, stop_at: int | None = None,
           weekdays_only: bool = False) -> None:
    """``days`` whole UTC days before ``day`` with ``PER_MINUTE`` hits a minute on /a, and
    ``day`` itself the same up to minute ``stop_at`` of it (None: the whole day).
    ``weekdays_only``: of the past days, only ``day``'s weekday and the first (all the
    band of a window inside ``day`` reads, in a fifth of the documents)."""
    items = [DayCounts(site, day - dt.timedelta(days=k), ["/a"],
                       np.full((1, 1440), PER_MINUTE, dtype=np.int64))
             for k in range(days, 0, -1) if not weekdays_only or k % 7 == 0 or k == days]
    today = np.full((1, 1440), PER_MINUTE, dtype=np.int64)
    if stop_at is not None:
        today[:, stop_at:] = 0
    queries.backfill(db, [*items, DayCounts(site, day, ["/a"], today)])


def services(db) -> SimpleNamespace:
    """What the checker reads of the server's services: the store and the settings."""
    return SimpleNamespace(db=db, settings=SimpleNamespace(
        public_url="https://stats.example.com", host="127.0.0.1", port=8050))


def recorded(monkeypatch) -> list[dict]:
    """Every ``deliver`` call the checker makes, with its result."""
    from queries.notify import deliveries

    calls: list[dict] = []
    real = deliveries.deliver

    def deliver(services, **kwargs):
        result = real(services, **kwargs)
        calls.append({**kwargs, "result": result})
        return result

    monkeypatch.setattr(deliveries, "deliver", deliver)
    return calls


def sent(calls: list[dict]) -> list[tuple[str, str]]:
    """(state, to) of the sends claimed (whatever the channel then did: without a mail
    server or a receiver, an attempt fails and is retried, never claimed again); the
    state from the claim (``alert/<incident>/<state>/<alert id>``)."""
    return [(c["claim_id"].rsplit("/", 2)[1], c["to"]) for c in calls
            if c["result"] != "taken"]
