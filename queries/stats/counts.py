"""The pre-aggregated reports as a representation of the count engine
(``queries.counting``): a pending unit is one page's UTC day, its hits per minute and
the bot hits among them; a flush writes each unit into the page's and the whole site's
daily and monthly documents (``writes.increments``), and the engine's thread
pre-allocates tomorrow's documents of the pages that came back (``nextday``)."""

from __future__ import annotations

import datetime as dt

from . import schema
from .nextday import NextDay
from .writes import Increment, increments, sum_minutes, targets

# A unit: ({minute of the UTC day: hits}, {minute: bot hits}).
Unit = tuple[dict[int, int], dict[int, int]]


class StatsCounts:
    """What ``stats.daily`` and ``stats.monthly`` count; ``preallocate``: whether the
    engine's ticks write tomorrow's documents ahead."""

    def __init__(self, db, preallocate: bool = True):
        self.preallocate = preallocate
        self.tomorrow = NextDay(db)

    def open(self, key: tuple) -> tuple[Unit, list[tuple]]:
        site, page, year, month, day = key
        touched = []
        for target in targets(page):
            touched.append((schema.DAILY, site, target, year, month, day))
            touched.append((schema.MONTHLY, site, target, year, month))
        self.tomorrow.note(dt.datetime(year, month, day, tzinfo=dt.UTC), site, page)
        return ({}, {}), touched

    @staticmethod
    def add(unit: Unit, payload: tuple[int, int], n: int) -> None:
        """``payload``: (minute of the UTC day, bot hits among the ``n``)."""
        minute, bots = payload
        minutes = unit[0]
        minutes[minute] = minutes.get(minute, 0) + n
        if bots:
            bot_minutes = unit[1]
            bot_minutes[minute] = bot_minutes.get(minute, 0) + bots

    @staticmethod
    def merge(unit: Unit, part: Unit) -> None:
        sum_minutes(unit[0], part[0])
        sum_minutes(unit[1], part[1])

    @staticmethod
    def hits(part: Unit) -> int:
        return sum(part[0].values())

    @staticmethod
    def documents(pending: dict[tuple, Unit]) -> tuple[dict[tuple[str, str], Increment], list]:
        minutes = {key: unit[0] for key, unit in pending.items()}
        bots = {key: unit[1] for key, unit in pending.items() if unit[1]}
        return increments(minutes, bots), []

    @staticmethod
    def save_whole(db, collection: str, docs: list[dict]) -> None:
        raise AssertionError("the stats write no document whole")

    def tick(self, now: dt.datetime) -> None:
        if self.preallocate:
            self.tomorrow.tick(now)
