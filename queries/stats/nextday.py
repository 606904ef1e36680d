"""Tomorrow's documents, pre-allocated with zeros for the pages active today, so they
never grow (the use case's ``preallocate``).

Only pages that came back: hits in at least ``RETURNING`` of the engine's flushes of
the day. A page seen once (a typo, a crawler's guess, a flood of made-up names through
``/hit``) would otherwise get ~12 KiB of zeros for a day it may never have.

A schedule rather than the use case's per-hit coin toss: during the last UTC hour, each
tick of the count engine's thread writes a few, so the work is bounded, happens once per
page, and is testable with an injected clock.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading

from pymongo.errors import PyMongoError

from . import schema
from .writes import preallocate

log = logging.getLogger(__name__)
FROM_HOUR = 23
PER_TICK = 50
MAX_ACTIVE_PAGES = 20_000
RETURNING = 2


class NextDay:
    """The pages seen per UTC day, and which of tomorrow's documents exist already."""

    def __init__(self, db):
        self.db = db
        self._lock = threading.Lock()
        self._active: dict[dt.datetime, dict[tuple[str, str], int]] = {}
        self._done: set[tuple[dt.datetime, str, str]] = set()

    def note(self, day: dt.datetime, site: str, page: str) -> None:
        """``page`` of ``site`` had hits on the UTC ``day`` in one more flush (called once
        per flush that counts the page)."""
        with self._lock:
            active = self._active.setdefault(day, {})
            if (site, page) in active:
                active[(site, page)] += 1
            elif len(active) < MAX_ACTIVE_PAGES:
                active[(site, page)] = 1

    def tick(self, now: dt.datetime) -> None:
        if now.hour >= FROM_HOUR:
            self.preallocate(now, limit=PER_TICK)

    def preallocate(self, now: dt.datetime, limit: int | None = None) -> int:
        today = schema.day_start(now)
        tomorrow = today + dt.timedelta(days=1)
        with self._lock:
            todo = [(s, p) for (s, p), flushes in self._active.get(today, {}).items()
                    if flushes >= RETURNING and (tomorrow, s, p) not in self._done]
            for old in [d for d in self._active if d < today]:
                del self._active[old]
        done = 0
        for site, page in todo[:limit]:
            try:
                preallocate(self.db, tomorrow, site, page)
            except PyMongoError as exc:
                log.warning("pre-allocation failed: %s", exc)
                break
            self._done.add((tomorrow, site, page))
            done += 1
        return done
