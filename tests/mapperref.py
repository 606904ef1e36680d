"""The line mapper's reference: a log's lines tallied one by one, as the mapper did before
its per-line work moved into Polars (``queries.ingest.frames``). Slow and obvious, for
tests that compare the mapper's tallies and events with it."""

from __future__ import annotations

from queries import validation
from queries.dimensions.classify import classify, is_bot_agent
from queries.dimensions.counters import hour_unit
from queries.errors import InvalidPageError, InvalidSiteError
from queries.ingest.logformat import LineParser, LogRecord
from queries.ingest.mapper import Tally, split_lines
from queries.stats.writes import day_unit

EVENT_FIELDS = ("time", "host", "method", "path", "query", "status", "bytes", "referrer",
                "user_agent")


def _site(name: str) -> str | None:
    try:
        return validation.site(name)
    except InvalidSiteError:
        return None


def reference(data: bytes, start: int, default_site: str, *, site: str | None = None,
              format: str = "auto", unknown_bots: bool = False,
              apart: frozenset = frozenset()) -> tuple[Tally, list, list]:
    """The tally of ``data``'s lines, with its events and its kept-apart events as
    (site, offset, fields) rows in line order."""
    parser, tally = LineParser(format), Tally()
    events, apart_events = [], []
    for line, offset in split_lines(data, start):
        tally.lines += 1
        record = parser.parse(line)
        if not isinstance(record, LogRecord):
            tally.rejected[str(record)] += 1
            continue
        if "\ufffd" in line:
            tally.tolerated["undecodable_bytes"] += 1
        where = site or (_site(record.vhost) if record.vhost else _site(default_site))
        if where is None:
            tally.rejected["bad_site"] += 1
            continue
        try:
            page = validation.page(record.path)
        except InvalidPageError:
            tally.rejected["bad_target"] += 1
            continue
        row = (where, offset, tuple(getattr(record, name) for name in EVENT_FIELDS))
        if where in apart:
            tally.apart[where] += 1
            apart_events.append(row)
            continue
        key, minute = day_unit((where, page), record.time)
        minutes = tally.hits.setdefault(key, {})
        minutes[minute] = minutes.get(minute, 0) + 1
        if is_bot_agent(record.user_agent, unknown_bots):
            minutes = tally.bots.setdefault(key, {})
            minutes[minute] = minutes.get(minute, 0) + 1
        tally.first = min(tally.first or record.time, record.time)
        tally.last = max(tally.last or record.time, record.time)
        found = classify(where, record.path, query=record.query, status=record.status,
                         referrer_url=record.referrer, agent=record.user_agent,
                         address=record.host, vhost=record.vhost, unknown_bots=unknown_bots)
        counts, pairs = tally.units.setdefault(hour_unit(where, record.time), ({}, set()))
        counts[found.values] = counts.get(found.values, 0) + 1
        pairs.add((found.visitor, found.values))
        events.append(row)
    for (where, *_), minutes in tally.hits.items():
        tally.sites[where] += sum(minutes.values())
    tally.parsed = sum(tally.sites.values())
    tally.tolerated.update(parser.tolerated)
    return tally, events, apart_events


class Captured:
    """An event writer that keeps what ``write_lines`` is given, as reference rows."""

    keyed = True

    def __init__(self):
        self.rows: list = []
        self.totals = None

    def write_lines(self, lines, sites, stream, offsets) -> int:
        fields = zip(*(lines[name] for name in EVENT_FIELDS), strict=True)
        self.rows.extend(zip(sites, offsets, map(tuple, fields), strict=True))
        return 0


def same(tally: Tally, expected: Tally) -> list[str]:
    """The fields where two tallies differ (``units`` by content, in order too)."""
    names = ("lines", "parsed", "rejected", "tolerated", "sites", "first", "last", "hits",
             "bots", "units", "apart")
    differ = [name for name in names if getattr(tally, name) != getattr(expected, name)]
    if list(tally.units) != list(expected.units) or any(
            list(tally.units[unit][0]) != list(expected.units[unit][0])
            for unit in expected.units if unit in tally.units):
        differ.append("units order")
    return differ
