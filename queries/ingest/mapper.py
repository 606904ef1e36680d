"""Log lines → a :class:`Tally`: what a run of lines amounts to, ready to merge.

Parsing, classifying and the raw events are most of an ingest's work, and none of it
needs the recorders: a :class:`LineMapper` turns lines into a tally of hits (in the
HitRecorder's pending format), of dimensions (the DimensionRecorder's) and of the
summary's figures, and writes the lines' events itself. The ingest run merges tallies
into its recorders, in file order, and flushes them under its checkpoint. The same
mapper runs in the ingest process or in worker processes (``queries.ingest.workers``),
one code path either way. Events leave before their tally is returned, so they are
always stored before the flush that counts their hits (step (b) of
``queries.ingest.session``); their places in the file make a second write a no-op.
A worker process may count a chunk's dimensions after handing over its tally
(``defer_dimensions``: the tally then holds their input, ``slices``). The lines of a
site whose primary source is not its logs (``keep_apart``) are written to
``events.apart`` instead, and counted nowhere else.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import accumulate, repeat
from operator import add
from typing import TYPE_CHECKING

from .. import validation
from ..dimensions.classify import RecordCoder, is_bot_agent
from ..dimensions.tally import LogTally
from ..errors import InvalidPageError, InvalidSiteError
from ..events.writer import EventTotals, EventWriter
from ..stats.sites import primary_source
from ..stats.writes import day_unit
from .logformat import LineParser, LogRecord, columns

if TYPE_CHECKING:
    from .dimwriter import Deferred, PackedUnits

MAX_NAMES = 100_000      # (site, page) validations remembered
# A chunk's records are turned into the dimensions' columns a slice of lines at a time,
# while the slice is in the CPU's cache (transposing a whole chunk's records at its end
# cost ~1.5 µs a line); counting the columns later costs what counting them at once does.
SLICE_LINES = 1024
# A line's bytes that are not UTF-8 are decoded as U+FFFD (never a lone surrogate, which
# no store can hold): such a line counts, and is reported among the tolerated ones.
REPLACED, UNDECODABLE = "\ufffd", "undecodable_bytes"


@dataclass
class Tally:
    lines: int = 0
    parsed: int = 0
    rejected: Counter = field(default_factory=Counter)
    tolerated: Counter = field(default_factory=Counter)   # odd lines parsed, by oddity
    sites: Counter = field(default_factory=Counter)
    first: dt.datetime | None = None
    last: dt.datetime | None = None
    hits: dict = field(default_factory=dict)    # HitRecorder pending: key -> {minute: n}
    bots: dict = field(default_factory=dict)    # the bot hits among them, the same way
    # DimensionRecorder pending (key -> unit); in a worker, packed or deferred for the
    # dimension process (``dimwriter``).
    units: dict | PackedUnits | Deferred = field(default_factory=dict)
    events: EventTotals | None = None           # the events this tally's lines wrote
    # With ``defer_dimensions``: the dimensions' input, (sites, columns) per slice of
    # lines, for ``LineMapper.count_dimensions``; ``units`` is then empty.
    slices: list | None = None
    apart: Counter = field(default_factory=Counter)   # lines kept apart, per site


class LineMapper:
    """Parses lines of one ``format``. Each hit's site is ``site`` if given, else the
    line's virtual host, else the ``default_site`` passed with the lines.
    ``defer_dimensions``: tallies hold their dimensions' input rather than their units,
    for :meth:`count_dimensions` (a worker process's thread) to count. ``unknown_bots``:
    lines without a user agent are bots (else people)."""

    def __init__(self, site: str | None = None, format: str = "auto",
                 dimensions: bool = True, defer_dimensions: bool = False,
                 unknown_bots: bool = False):
        self.site = None if site is None else validation.site(site)
        self.parser = LineParser(format)
        self.dimensions = dimensions
        self.defer_dimensions = defer_dimensions
        self._sites: dict[str, str | None] = {}
        self._names: dict[tuple[str, str], tuple[str, str] | None] = {}
        self._coder: RecordCoder | None = None   # kept from chunk to chunk
        self.unknown_bots = unknown_bots
        self._bots = _BotAgents(unknown_bots)
        self._apart: _ApartSites | None = None
        self._apart_events: EventWriter | None = None

    def keep_apart(self, db, events: EventWriter | None) -> None:
        """Write the lines of sites whose primary source is not their logs to ``events``
        (an ``events.apart`` writer; None: drop them), reading (and claiming, for a site
        no source has fed yet) each site's primary source in ``db`` once."""
        self._apart, self._apart_events = _ApartSites(db), events

    def map(self, lines: Iterable[tuple[str, int]], default_site: str, stream: int,
            events: EventWriter | None) -> Tally:
        """Tally ``(line, offset)`` pairs (decoded lines, see :func:`split_lines`;
        ``offset``: where the line starts in the pass ``stream``); their events are
        written through ``events`` before returning."""
        tally = Tally()
        if events is not None:
            events.totals = tally.events = EventTotals()
        parse, rejected, sites, hits, bots = (self.parser.parse, tally.rejected, tally.sites,
                                              tally.hits, tally.bots)
        tolerated = tally.tolerated
        is_bot = self._bots.__getitem__
        slices = [] if self.dimensions else None
        part, part_sites = [], []                   # the dimensions' slice of lines
        records, record_sites, offsets = [], [], []  # the events' lines
        first = last = None
        lines_seen = 0
        fixed, default, names_of = self.site, self._site(default_site), self._names
        apart_of, apart = self._apart, tally.apart
        apart_lines: tuple[list, list, list] = ([], [], [])
        for line, offset in lines:
            lines_seen += 1
            record = parse(line)
            if not isinstance(record, LogRecord):
                rejected[str(record)] += 1
                continue
            if REPLACED in line:        # O(1) on an ASCII line: U+FFFD cannot be in it
                tolerated[UNDECODABLE] += 1
            site = fixed or (self._site(record.vhost) if record.vhost else default)
            if site is None:
                rejected["bad_site"] += 1
                continue
            names = names_of.get((site, record.path), False)
            if names is False:
                names = self._validate(site, record.path)
            if names is None:
                rejected["bad_target"] += 1
                continue
            if apart_of is not None and apart_of[site]:
                apart[site] += 1
                for kept, value in zip(apart_lines, (record, site, offset), strict=True):
                    kept.append(value)
                continue
            ts = record.time
            key, minute = day_unit(names, ts)
            minutes = hits.get(key)
            if minutes is None:
                minutes = hits[key] = {}
            minutes[minute] = minutes.get(minute, 0) + 1
            if is_bot(record.user_agent):
                minutes = bots.get(key)
                if minutes is None:
                    minutes = bots[key] = {}
                minutes[minute] = minutes.get(minute, 0) + 1
            if first is None or ts < first:
                first = ts
            if last is None or ts > last:
                last = ts
            if slices is not None:
                part.append(record)
                part_sites.append(site)
                if len(part) == SLICE_LINES:
                    slices.append((part_sites, columns(part)))
                    part, part_sites = [], []
            if events is not None:
                records.append(record)
                record_sites.append(site)
                offsets.append(offset)
        for (site, *_), minutes in hits.items():       # a parsed line is a hit
            sites[site] += sum(minutes.values())
        tally.lines, tally.first, tally.last = lines_seen, first, last
        tally.tolerated.update(self.parser.tolerated)
        self.parser.tolerated.clear()
        tally.parsed = sum(sites.values())
        if slices is not None:
            if part:
                slices.append((part_sites, columns(part)))
            if self.defer_dimensions:
                tally.slices = slices
            else:
                tally.units = self.count_dimensions(slices)
        if records:
            events.write_lines(columns(records), record_sites, stream, offsets)
        if apart_lines[0] and self._apart_events is not None:
            kept, kept_sites, kept_offsets = apart_lines
            self._apart_events.write_lines(columns(kept), kept_sites, stream, kept_offsets)
        return tally

    def count_dimensions(self, slices: list) -> dict:
        """The DimensionRecorder's pending units of a tally's ``slices``."""
        dimensions = LogTally(self._chunk_coder())
        for sites, lines in slices:
            dimensions.add_lines(sites, lines)
        return dimensions.pending()

    def _chunk_coder(self) -> RecordCoder:
        """The coder of the next chunk: the last one's, until it is full."""
        if self._coder is None or self._coder.full:
            self._coder = RecordCoder(self.unknown_bots)   # what it knew is classified again
        return self._coder

    def map_chunk(self, data: bytes, start: int, default_site: str, stream: int,
                  events: EventWriter | None) -> Tally:
        """``map`` of the lines of ``data``, read from byte ``start`` of the file."""
        return self.map(split_lines(data, start), default_site, stream, events)

    def _site(self, name: str) -> str | None:
        if name not in self._sites:
            try:
                self._sites[name] = validation.site(name)
            except InvalidSiteError:
                self._sites[name] = None
        return self._sites[name]

    def _validate(self, site: str, page: str) -> tuple[str, str] | None:
        """The recorder's names of (site, page), None for a page that cannot be one."""
        if len(self._names) >= MAX_NAMES:
            self._names.clear()
        try:
            names = (site, validation.page(page))
        except InvalidPageError:
            names = None
        self._names[(site, page)] = names
        return names


class _BotAgents(dict):
    """User agent -> whether it is a bot, classified on first sight (a log repeats its
    agents: a dictionary look-up a line), forgotten past ``MAX_NAMES`` agents."""

    def __init__(self, unknown_bots: bool):
        super().__init__()
        self.unknown_bots = unknown_bots

    def __missing__(self, agent: str | None) -> bool:
        if len(self) >= MAX_NAMES:
            self.clear()
        bot = self[agent] = is_bot_agent(agent, self.unknown_bots)
        return bot


class _ApartSites(dict):
    """Site -> whether its lines are kept apart (its primary source is not its logs),
    read once per site and mapper."""

    def __init__(self, db):
        super().__init__()
        self.db = db

    def __missing__(self, site: str) -> bool:
        apart = self[site] = primary_source(self.db, site, "log") != "log"
        return apart


def hour_units(hits: dict) -> list[tuple]:
    """The DimensionRecorder's units (``counters.hour_unit``) of a tally's hits: the
    documents its dimensions will touch, known before they are counted."""
    return list({("u", site, year, month, day, minute // 60)
                 for (site, _, year, month, day), minutes in hits.items()
                 for minute in minutes})


def split_lines(data: bytes, start: int) -> Iterator[tuple[str, int]]:
    """The lines of ``data`` (read from byte ``start``), decoded (a byte that is not
    UTF-8 becomes U+FFFD) and without their newline, each with the byte offset it starts
    at. Decoded and split in C, whole: newlines are the same bytes in UTF-8 and in the
    text, so line i of one is line i of the other (and as long, if all is ASCII)."""
    lines = data.decode("utf-8", "replace").split("\n")
    sizes = map(len, lines if data.isascii() else data.split(b"\n"))
    offsets = accumulate(map(add, sizes, repeat(1)), initial=start)
    if not lines[-1]:               # ended by a newline (or empty): no line after it
        lines.pop()
    return zip(lines, offsets, strict=False)        # one offset more than lines
