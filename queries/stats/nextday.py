"""Tomorrow's documents, pre-allocated with zeros for the pages active today, so they
never grow (the use case's ``preallocate``).

A schedule rather than the use case's per-hit coin toss: during the last UTC hour, each
tick of the recorder's thread writes a few, so the work is bounded, happens once per page,
and is testable with an injected clock.
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


class NextDay:
    """The pages seen per UTC day, and which of tomorrow's documents exist already."""

    def __init__(self, db, lock: threading.Lock):
        self.db = db
        self._lock = lock   # the recorder's: ``note`` runs under it, on every new unit
        self._active: dict[dt.datetime, set[tuple[str, str]]] = {}
        self._done: set[tuple[dt.datetime, str, str]] = set()

    def note(self, day: dt.datetime, site: str, page: str) -> None:
        """``page`` of ``site`` had hits on the UTC ``day`` (called under the lock)."""
        active = self._active.setdefault(day, set())
        if len(active) < MAX_ACTIVE_PAGES:
            active.add((site, page))

    def tick(self, now: dt.datetime) -> None:
        if now.hour >= FROM_HOUR:
            self.preallocate(now, limit=PER_TICK)

    def preallocate(self, now: dt.datetime, limit: int | None = None) -> int:
        today = schema.day_start(now)
        tomorrow = today + dt.timedelta(days=1)
        with self._lock:
            todo = [(s, p) for s, p in self._active.get(today, ())
                    if (tomorrow, s, p) not in self._done]
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
