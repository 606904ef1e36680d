"""A log's lines counted by dimensions apart from any recorder: what an ingest's worker
processes hand over (``queries.ingest.mapper``), in the DimensionRecorder's pending
format (``counters``)."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Sequence

from .classify import RecordCoder
from .counters import hour_unit


class LogTally:
    """Log lines counted by dimensions apart from any recorder (``queries.ingest.mapper``:
    in worker processes), per site and UTC hour, and handed over in the
    DimensionRecorder's pending format (:meth:`pending`, merged with ``add_pending``).
    Lines come as columns and are counted in C (``map``, ``zip``, ``Counter``): their
    hours and ``RecordCoder`` keys are looked up, (hour, key) pairs counted, and
    (hour, address, agent, key) visits gathered in a set; a visitor is its address and
    agent, joined into the sketches' string once per visitor and shared by its visits."""

    def __init__(self, coder: RecordCoder | None = None):
        self.coder = RecordCoder() if coder is None else coder
        self._hours = _HourUnits()
        self._counts: Counter = Counter()       # (hour, key) -> hits
        self._visits: set[tuple] = set()        # (hour, address, agent, key)

    def add_lines(self, sites: Sequence[str], lines: dict[str, Sequence]) -> None:
        """Count parsed log lines: ``lines`` holds their fields as columns (``time``
        and what ``RecordCoder.keys`` reads; ``queries.ingest.logformat.columns``
        gives them), ``sites`` their sites."""
        hours = list(map(self._hours.__getitem__, zip(sites, lines["time"], strict=True)))
        keys = self.coder.keys(sites, lines)
        self._counts.update(zip(hours, keys, strict=True))
        self._visits.update(zip(hours, lines["host"], lines["user_agent"], keys,
                                    strict=True))

    def pending(self) -> dict:
        """{hour unit: ({values: hits}, {(visitor, values)})}, the DimensionRecorder's
        pending units (``counters._add`` keeps them so)."""
        values, units = self.coder.values, self._hours.units
        out = {unit: ({}, set()) for unit in units}
        parts = [out[unit] for unit in units]
        for (hour, key), n in self._counts.items():     # a key gives one values tuple
            parts[hour][0][values(key)] = n
        visitors: dict[tuple, str] = {}        # one string per visitor: pickled once
        for hour, host, agent, key in self._visits:
            visitor = visitors.get((host, agent))
            if visitor is None:
                visitor = visitors[host, agent] = f"{host or ''}\x00{agent or ''}"
            parts[hour][1].add((visitor, values(key)))
        return out


class _HourUnits(dict):
    """(site, UTC time) -> the number of its hour unit (``units``), made on first use:
    times repeat (a second holds many hits), hours more."""

    def __init__(self):
        super().__init__()
        self.units: list[tuple] = []
        self._numbers: dict[tuple, int] = {}

    def __missing__(self, given: tuple[str, dt.datetime]) -> int:
        unit = hour_unit(*given)
        number = self._numbers.get(unit)
        if number is None:
            number = self._numbers[unit] = len(self.units)
            self.units.append(unit)
        self[given] = number
        return number
