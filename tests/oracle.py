"""An independent count of an access log, for the oracle test (tests/test_oracle.py).

Its own parser (a regular expression per line), its own time buckets (wall-clock hours
and days of a zone, walked in Python's ``zoneinfo``), its own ranges and comparison
periods, exact visitor sets: nothing of hitboard's counting. Only what a hit *is* comes
from hitboard's classifiers (bot or person by user agent, a referrer's host), since
classification is not what this test checks.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from queries.dimensions import agents
from queries.dimensions.referrer import own_hosts, referrer_host

LINE = re.compile(r'(\S+) \S+ \S+ \[([^\]]+)\] "(?:[^"\\]|\\.)*" (\d{3}|-) \S+'
                  r'(?: "((?:[^"\\]|\\.)*)" "((?:[^"\\]|\\.)*)"?)?')
MONTHS = {m: i for i, m in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)}
DAY = dt.timedelta(days=1)


@dataclass(frozen=True)
class Hit:
    time: dt.datetime          # UTC
    visitor: tuple[str, str]   # (address, agent)
    status: str
    referrer: str
    bot: bool


def parse(lines, site: str) -> list[Hit]:
    """Every line as a hit; a line this parser cannot read fails the test."""
    hits, hosts = [], own_hosts(site)
    for number, line in enumerate(lines, 1):
        m = LINE.match(line)
        assert m, f"line {number} unread by the oracle: {line[:120]}"
        address, stamp, status, ref, agent = m.groups()
        day, month, rest = stamp.split("/", 2)
        year, hh, mm, ss = rest[:4], rest[5:7], rest[8:10], rest[11:13]
        sign, offset = rest[14], rest[15:19]
        shift = dt.timedelta(hours=int(offset[:2]), minutes=int(offset[2:]))
        local = dt.datetime(int(year), MONTHS[month], int(day), int(hh), int(mm), int(ss))
        when = (local - shift if sign == "+" else local + shift).replace(tzinfo=dt.UTC)
        agent = None if agent in (None, "", "-") else agent
        hits.append(Hit(when, (address, agent or ""), status,
                        referrer_host(None if ref in (None, "-") else ref, hosts),
                        agent is not None and agents.parse(agent).bot))
    return hits


def local(day: str, zone: ZoneInfo) -> dt.datetime:
    """An ISO date or date-time read in ``zone`` (an ambiguous time: its first)."""
    return dt.datetime.fromisoformat(day).replace(tzinfo=zone).astimezone(dt.UTC)


def bucket(t: dt.datetime, granularity: str, zone: ZoneInfo) -> dt.datetime:
    """The start (UTC) of the local minute, hour or day holding ``t``."""
    wall = t.astimezone(zone)
    if granularity == "minute":
        wall = wall.replace(second=0, microsecond=0)
    elif granularity == "hour":
        wall = wall.replace(minute=0, second=0, microsecond=0)
    else:
        wall = wall.replace(hour=0, minute=0, second=0, microsecond=0, fold=0)
    return wall.astimezone(dt.UTC)


def previous(start: dt.datetime, end: dt.datetime, zone: ZoneInfo, vs: str = "previous"
             ) -> tuple[dt.datetime, dt.datetime]:
    """What a range is compared with (README, History): a range starting at a local
    midnight steps back as many whole local days as it spans, started ones included
    (7 days so far: the same hours 7 days before); any other its own length; ``yoy``:
    364 days of wall-clock time earlier."""
    span = end - start
    if vs == "yoy":
        return tuple(_wall(t, -364, zone) for t in (start, end))
    if start.astimezone(zone).time() != dt.time():
        return start - span, start
    days = -(-span // DAY)
    first = _wall(start, -days, zone)
    return first, first + span


def _wall(t: dt.datetime, days: int, zone: ZoneInfo) -> dt.datetime:
    wall = t.astimezone(zone).replace(tzinfo=None) + dt.timedelta(days=days)
    return wall.replace(tzinfo=zone).astimezone(dt.UTC)


@dataclass(frozen=True)
class Counted:
    """What the oracle counts in a range for one population (and filter)."""

    buckets: dict[dt.datetime, int]
    total: int
    visitors: int
    status: Counter
    referrers: Counter
    referrer_visitors: dict[str, int]


def count(hits: list[Hit], start: dt.datetime, end: dt.datetime, granularity: str,
          zone: ZoneInfo, humans: bool, status: str | None = None) -> Counted:
    """The hits of [start, end) (people's if ``humans``; those answered ``status`` if
    given) per local bucket, and their figures."""
    chosen = [h for h in hits if start <= h.time < end and not (humans and h.bot)
              and (status is None or h.status == status)]
    per = Counter(bucket(h.time, granularity, zone) for h in chosen)
    people: dict[str, set] = {}
    for h in chosen:
        people.setdefault(h.referrer, set()).add(h.visitor)
    return Counted(dict(per), len(chosen), len({h.visitor for h in chosen}),
                   Counter(h.status for h in chosen), Counter(h.referrer for h in chosen),
                   {ref: len(seen) for ref, seen in people.items()})


def buckets(start: dt.datetime, end: dt.datetime, granularity: str, zone: ZoneInfo
            ) -> list[dt.datetime]:
    """Every local bucket [start, end) touches, in order, walking its minutes."""
    found, t = [], bucket(start, granularity, zone)
    step = dt.timedelta(minutes=1 if granularity == "minute" else 15)
    while t < end:
        b = bucket(t, granularity, zone)
        if not found or found[-1] != b:
            found.append(b)
        t += step
    return found
