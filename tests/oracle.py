"""An independent count of an access log, for the oracle test (tests/test_oracle*.py).

Its own parser (a regular expression per line), its own time buckets (wall-clock hours
and days of a zone, walked in Python's ``zoneinfo``), its own ranges and comparison
periods, exact visitor sets: nothing of hitboard's counting. Only what a hit *is* comes
from hitboard's classifiers (bot or person by user agent, a referrer's host), since
classification is not what this test checks.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from collections import Counter
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from queries.dimensions import agents, assets
from queries.dimensions.encoding import clean
from queries.dimensions.referrer import own_hosts, referrer_host
from queries.validation import decoded_path

LINE = re.compile(r'(\S+) \S+ \S+ \[([^\]]+)\] "(?:[^"\\]|\\.)*" (\d{3}|-) \S+'
                  r'(?: "((?:[^"\\]|\\.)*)" "((?:[^"\\]|\\.)*)"?)?')
NO_REFERRER_FIELD = "(not in the log)"   # unknown, not direct
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
                        NO_REFERRER_FIELD if ref is None  # a common-format line
                        else referrer_host(None if ref == "-" else ref, hosts),
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


def common_line(line: str) -> str:
    """A combined line as a common-format one: its last two quoted fields dropped."""
    head, _, _ = line.rstrip("\n").partition('" "')
    return head.rsplit(' "', 1)[0] if head.count('"') >= 3 else head


def generated_log() -> list[str]:
    """Two days around New York's change to summer time (2026-03-08, a 23-hour day):
    a long tail of pages, people whose visits run across midnight, bots, referrers."""
    rng = random.Random(7)
    agents = ["Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like "
              "Gecko) Chrome/126.0 Safari/537.36",
              "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
              "(KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
              "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"]
    referrers = ["-", "https://news.example/a", "https://search.example/?q=x"]
    start = dt.datetime(2026, 3, 7, 20, tzinfo=dt.UTC)
    lines = []
    for person in range(300):
        when = start + dt.timedelta(minutes=rng.randrange(0, 60 * 40))
        agent = rng.choice(agents)
        for view in range(rng.randint(1, 8)):
            page = f"/p/{int(rng.paretovariate(1.2)) % 900}"
            status = rng.choice((200, 200, 200, 304, 404))
            ref = rng.choice(referrers) if view == 0 else "-"
            lines.append(f"198.51.{person // 250}.{person % 250} - - "
                         f"[{when:%d/%b/%Y:%H:%M:%S +0000}] \"GET {page} HTTP/1.1\" {status} "
                         f"512 \"{ref}\" \"{agent}\"")
            when += dt.timedelta(minutes=rng.randint(1, 40))
    return lines


# -- visits ----------------------------------------------------------------------------
REQUEST = re.compile(r'(\S+) \S+ \S+ \[([^\]]+)\] "(\S+) ([^" ?]*)[^"]*" (\d{3}) \S+'
                     r'(?: "(?:[^"\\]|\\.)*" "((?:[^"\\]|\\.)*)"?)?')


@dataclass(frozen=True)
class View:
    visitor: tuple[str, str]
    time: dt.datetime
    page: str


def pageviews(lines) -> list[View]:
    """The log's pageviews by README's definition: a GET answered 2xx or 304, of a page
    (not an asset), by a person (not a bot). Lines of other shapes are not pageviews."""
    views = []
    for line in lines:
        m = REQUEST.match(line)
        if not m:
            continue
        address, stamp, method, path, status, agent = m.groups()
        status = int(status)
        agent = None if agent in (None, "", "-") else agent
        if method != "GET" or not (200 <= status < 300 or status == 304):
            continue
        if assets.kind(path) != assets.PAGE or (agent and agents.parse(agent).bot):
            continue
        when = dt.datetime.strptime(stamp, "%d/%b/%Y:%H:%M:%S %z").astimezone(dt.UTC)
        views.append(View((address, agent or ""), when, clean(decoded_path(path))))
    return views


def visits(views: list[View], timeout: dt.timedelta = dt.timedelta(minutes=30)) -> list[dict]:
    """Each visit: a visitor's pageviews in time order, those of one second in the log's
    (a page before the icons it asks for), cut where two are over ``timeout`` apart."""
    found, by_visitor = [], {}
    for view in views:
        by_visitor.setdefault(view.visitor, []).append(view)
    for seen in by_visitor.values():
        seen.sort(key=lambda v: v.time)      # stable: one second keeps the log's order
        current = [seen[0]]
        for view in seen[1:]:
            if view.time - current[-1].time > timeout:
                found.append(current)
                current = []
            current.append(view)
        found.append(current)
    return [{"start": v[0].time, "views": len(v), "entry": v[0].page, "exit": v[-1].page,
             "seconds": (v[-1].time - v[0].time).total_seconds()} for v in found]


def visit_metrics(views: list[View], start: dt.datetime, end: dt.datetime,
                  granularity: str, zone: ZoneInfo) -> dict[dt.datetime, dict]:
    """Per local bucket starting in [start, end): visits starting there, pageviews made
    there, bounce rate (%), mean duration (s), views per visit (None without visits)."""
    table: dict[dt.datetime, dict] = {}
    for visit in visits(views):
        if start <= visit["start"] < end:
            row = table.setdefault(bucket(visit["start"], granularity, zone), Counter())
            row["visits"] += 1
            row["bounces"] += visit["views"] == 1
            row["seconds"] += visit["seconds"]
            row["views"] += visit["views"]
    for view in views:
        if start <= view.time < end:
            table.setdefault(bucket(view.time, granularity, zone), Counter())["pageviews"] += 1
    out = {}
    for when, row in table.items():
        n = row["visits"]
        out[when] = {"visits": n, "pageviews": row["pageviews"],
                     "bounce_rate": 100 * row["bounces"] / n if n else None,
                     "visit_duration": row["seconds"] / n if n else None,
                     "views_per_visit": row["views"] / n if n else None}
    return out


# -- pages, "All time" ------------------------------------------------------------------
def page_hits(lines, start: dt.datetime, end: dt.datetime, humans: bool = True) -> Counter:
    """Hits per page (path without its query, decoded) in [start, end), whatever their
    method and status, people's alone if ``humans``: what the pages panel ranks (it
    leaves static files out, by ``assets``)."""
    hits: Counter = Counter()
    for line in lines:
        m = REQUEST.match(line)
        assert m, f"unread by the oracle: {line[:120]}"
        _, stamp, _, path, _, agent = m.groups()
        when = dt.datetime.strptime(stamp, "%d/%b/%Y:%H:%M:%S %z").astimezone(dt.UTC)
        agent = None if agent in (None, "", "-") else agent
        if start <= when < end and not (humans and agent and agents.parse(agent).bot):
            hits[clean(decoded_path(path))] += 1
    return hits


def scanner(when: dt.datetime, paths, times: int, agent: str) -> list[str]:
    """A scanner's lines: each of ``paths`` asked ``times`` times within the minutes
    after ``when``, answered 404."""
    return [f'203.0.113.66 - - [{when + dt.timedelta(seconds=i):%d/%b/%Y:%H:%M:%S +0000}] '
            f'"GET {path} HTTP/1.1" 404 210 "-" "{agent}"'
            for i, path in enumerate(p for p in paths for _ in range(times))]


def shifted(line: str, offset: str) -> str:
    """A line whose stamp keeps its wall-clock time under another offset (``+0530``):
    the same log written in another zone, its instants moved."""
    return line.replace(" +0000]", f" {offset}]", 1)


def local_days(hits: list[Hit], zone: ZoneInfo) -> tuple[dt.datetime, dt.datetime]:
    """The start of the local day of the first hit and the end of the last's (UTC):
    "All time" in ``zone``."""
    first = bucket(min(h.time for h in hits), "day", zone)
    last = bucket(max(h.time for h in hits), "day", zone)
    return first, _wall(last, 1, zone)


# -- goals -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Event:
    """A custom event as the beacon keeps it: a visitor's named event on a page."""

    visitor: tuple[str, str]
    time: dt.datetime
    page: str
    name: str
    bot: bool


def custom_events(lines, names=("Download", "Signup"), seed: int = 45) -> list[Event]:
    """Events drawn from the log: after one pageview in six, its visitor sends one of
    ``names`` from that page 0-20 minutes later; after one bot's GET in five, the bot
    sends the first (a bot's event counts nowhere)."""
    rng = random.Random(seed)
    found = []
    for line in lines:
        m = REQUEST.match(line)
        if not m or m.group(3) != "GET":
            continue
        address, stamp, _, path, _, agent = m.groups()
        agent = None if agent in (None, "", "-") else agent
        bot = bool(agent and agents.parse(agent).bot)
        if not bot and not pageviews([line]):
            continue
        if rng.random() >= (0.2 if bot else 1 / 6):
            continue
        when = dt.datetime.strptime(stamp, "%d/%b/%Y:%H:%M:%S %z").astimezone(dt.UTC)
        found.append(Event((address, agent or ""), when + dt.timedelta(
            seconds=rng.randrange(1200)), clean(decoded_path(path)),
            names[0] if bot else rng.choice(names), bot))
    return found


def page_pattern(pattern: str) -> re.Pattern:
    """A goal's page pattern as a regular expression: ``*`` one path segment's
    characters, ``**`` any characters, the rest itself."""
    return re.compile("".join(".*" if part == "**" else "[^/]*" if part == "*"
                              else re.escape(part)
                              for part in re.split(r"(\*\*|\*)", pattern)), re.DOTALL)


def goal(kind: str, value: str, views: list[View], events: list[Event],
         start: dt.datetime, end: dt.datetime) -> tuple[int, int]:
    """A goal's conversions and converting visitors in [start, end): a page goal's are
    the pageviews of the pages it names, an event goal's the people's events of its
    name."""
    if kind == "page":
        regex = page_pattern(value)
        chosen = [v.visitor for v in views
                  if start <= v.time < end and regex.fullmatch(v.page)]
    else:
        chosen = [e.visitor for e in events
                  if start <= e.time < end and e.name == value and not e.bot]
    return len(chosen), len(set(chosen))


# -- conditions ------------------------------------------------------------------------
PATH = re.compile(r'\S+ \S+ \S+ \[[^\]]+\] "\S+ ([^" ?]*)')


def pages_of(lines) -> list[str]:
    """Each line's page (its path, decoded, without the query), in ``parse``'s order:
    what a page condition of History keeps; ``""`` for a line without a request."""
    found = []
    for line in lines:
        m = PATH.match(line)
        found.append(clean(decoded_path(m.group(1))) if m else "")
    return found
