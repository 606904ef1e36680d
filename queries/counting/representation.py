"""What a representation of the count engine is (``engine``): what a pending unit
holds, and the documents a flush makes of it. The stats' (``queries.stats.counts``) and
the dimensions' (``queries.dimensions.counters``) follow it."""

from __future__ import annotations

import datetime as dt
from typing import Any, Protocol

from ..stats.writes import Increment


class Counts(Protocol):
    """A representation: what a pending unit holds and the documents a flush makes."""

    def open(self, key: tuple) -> tuple[Any, tuple]:
        """A new, empty unit for ``key`` and the documents (collection, ...) it touches."""

    def add(self, unit, payload, n: int) -> None:
        """Count ``n`` hits described by ``payload`` into ``unit`` (under the lock)."""

    def merge(self, unit, part) -> None:
        """Add a unit counted elsewhere (a tally, another process's) into ``unit``."""

    def hits(self, part) -> int:
        """The hits a unit holds."""

    def documents(self, pending: dict) -> tuple[dict[tuple[str, str], Increment], list]:
        """A flush's units as the ``$inc`` of each (collection, _id), and the documents
        written whole before them (see ``guarded.Batch``)."""

    def save_whole(self, db, collection: str, docs: list[dict]) -> None:
        """Write documents of a batch's ``before`` (idempotent)."""

    def tick(self, now: dt.datetime) -> None:
        """Periodic work after a successful flush of the engine's thread."""
