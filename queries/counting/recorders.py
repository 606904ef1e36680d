"""The two recorders a hit goes through: the count engine with the stats representation
(hits per page and minute) and with the dimension representation (referrers, agents,
countries... and visitor sketches per site and hour). Each only checks its arguments
and names the unit a hit counts in; counting and flushing are the engine's."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from .. import validation
from ..dimensions.classify import Dimensions
from ..dimensions.counters import DimensionCounts, hour_unit
from ..stats.counts import StatsCounts
from ..stats.writes import day_unit
from .engine import CountEngine


def _bad_count(n) -> validation.InvalidRangeError:
    return validation.InvalidRangeError(f"hit count must be a positive integer, got {n!r}")


class HitRecorder(CountEngine):
    """Hits into ``stats.daily`` and ``stats.monthly`` (``record``); with
    ``preallocate_next_day``, tomorrow's documents of the pages that came back are
    written ahead during the last UTC hour."""

    def __init__(self, db, flush_interval: float = 1.0, max_pending_docs: int = 10_000,
                 preallocate_next_day: bool = True, max_backoff: float = 30.0,
                 clock=None, writer: str | None = None):
        super().__init__(db, StatsCounts(db, preallocate_next_day), flush_interval,
                         max_pending_docs, max_backoff, clock, writer)

    def record(self, site: str, page: str, ts: dt.datetime | None = None, n: int = 1,
               bots: int = 0) -> None:
        """Count ``n`` hits, ``bots`` of them by bots; only memory is touched (the hot
        path of every request: the checks cost a call only when they fail)."""
        if ts is None or type(ts) is not dt.datetime or ts.tzinfo is not dt.UTC:
            ts = self._utc(ts)
        if type(n) is not int or n < 1:
            raise _bad_count(n)
        if bots and (type(bots) is not int or not 0 <= bots <= n):
            raise validation.InvalidRangeError(f"bot hits must be 0 to {n}, got {bots!r}")
        names = self._names.get((site, page)) or self._valid_names(site, page)
        key, minute = day_unit(names, ts)
        self._count(key, (minute, bots), n)

    def add_pending(self, pending: dict, bots: dict | None = None) -> None:
        """Count hits tallied apart (ingest's worker processes parse lines:
        ``queries.ingest.mapper``) as ``{(site, page, year, month, day): {minute:
        hits}}``, ``bots`` the bot hits among them in the same format."""
        bots = bots or {}
        self._add_units({key: (minutes, bots.get(key) or {})
                         for key, minutes in pending.items()})

    def preallocate_next_day(self, now: dt.datetime, limit: int | None = None) -> int:
        """Pre-allocate tomorrow's documents of the pages active on ``now``'s UTC day."""
        return self.counts.tomorrow.preallocate(now, limit)


class DimensionRecorder(CountEngine):
    """``record(site, page, ts, dims, n)`` counts ``n`` hits of one visitor with the
    dimensions ``dims`` (``classify``) into ``dims.*`` and the visitor sketches."""

    def __init__(self, db, flush_interval: float = 1.0, max_pending_docs: int = 10_000,
                 max_backoff: float = 30.0, clock=None, writer: str | None = None):
        super().__init__(db, DimensionCounts(db), flush_interval, max_pending_docs,
                         max_backoff, clock, writer)

    def record(self, site: str, page: str, ts: dt.datetime | None = None,
               dims: Dimensions | None = None, n: int = 1) -> None:
        """The hit's values count in its hour's unit, and its (visitor, values) pair
        goes into a set for the sketches at flush time (a visitor's assets share one)."""
        self._count(self._unit_key(site, page, ts, dims, n), dims, n)

    def record_many(self, hits: Iterable[tuple[str, str, dt.datetime, Dimensions, int]]
                    ) -> None:
        """``record`` of each ``(site, page, ts, dims, n)``, all checked first, then
        counted hour by hour as ``add_pending`` does: one turn of the lock per hour
        rather than per hit (a backfill records a day's visits at once)."""
        pending: dict[tuple, tuple[dict, set]] = {}
        for site, page, ts, dims, n in hits:
            key = self._unit_key(site, page, ts, dims, n)
            unit = pending.get(key)
            if unit is None:
                unit = pending[key] = ({}, set())
            DimensionCounts.add(unit, dims, n)
        self.add_pending(pending)

    def add_pending(self, pending: dict) -> None:
        """Count units tallied apart (``tally``), in the representation's format."""
        self._add_units(pending)

    def _unit_key(self, site: str, page: str, ts, dims, n) -> tuple:
        """The hour unit of a checked hit (clear errors for bad arguments)."""
        if dims is None:
            raise validation.InvalidRangeError("a dimension record needs its dimensions")
        if ts is None or type(ts) is not dt.datetime or ts.tzinfo is not dt.UTC:
            ts = self._utc(ts)
        if type(n) is not int or n < 1:
            raise _bad_count(n)
        site, _ = self._names.get((site, page)) or self._valid_names(site, page)
        return hour_unit(site, ts)
