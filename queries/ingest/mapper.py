"""Log lines → a :class:`Tally`: what a run of lines amounts to, ready to merge.

Parsing, classifying and the raw events are most of an ingest's work, and none of it
needs the recorders: a :class:`LineMapper` turns lines into a tally of hits (in the
HitRecorder's pending format), of dimensions (the DimensionRecorder's) and of the
summary's figures, and writes the lines' events itself. A chunk of lines is a Polars
frame (``frames``): parsed, checked and counted as columns, Python running once per
distinct value (a site, a page, a user agent) and per group counted, never per line.
The ingest run merges tallies into its recorders, in file order, and flushes them under
its checkpoint. Events leave before their tally is returned, so they are always stored
before the flush that counts their hits (step (b) of ``queries.ingest.session``); their
places in the file make a second write a no-op. The lines of a
site whose primary source is not its logs (``keep_apart``) are written to
``events.apart`` instead, and counted nowhere else.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, repeat
from operator import add

import polars as pl

from .. import validation
from ..counting.count import CountStep
from ..dimensions.tally import lookup
from ..errors import InvalidPageError, InvalidSiteError
from ..events.writer import LOG_FIELDS, EventTotals, EventWriter
from ..stats.sites import primary_source
from . import frames
from .logformat import LineParser

MAX_NAMES = 100_000      # (site, page) validations remembered
# A line's bytes that are not UTF-8 are decoded as U+FFFD (never a lone surrogate, which
# no store can hold): such a line counts, and is reported among the tolerated ones.
UNDECODABLE = "undecodable_bytes"


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
    units: dict = field(default_factory=dict)   # DimensionRecorder pending: key -> unit
    events: EventTotals | None = None           # the events this tally's lines wrote
    apart: Counter = field(default_factory=Counter)   # lines kept apart, per site


class LineMapper:
    """Parses lines of one ``format``. Each hit's site is ``site`` if given, else the
    line's virtual host, else the ``default_site`` passed with the lines.
    ``unknown_bots``: lines without a user agent are bots (else people)."""

    def __init__(self, site: str | None = None, format: str = "auto",
                 dimensions: bool = True, unknown_bots: bool = False):
        self.site = None if site is None else validation.site(site)
        self.parser = LineParser(format)
        self.dimensions = dimensions
        self._sites: dict[str, str | None] = {}
        self._names: dict[tuple[str, str], str | None] = {}
        self.unknown_bots = unknown_bots
        self.step = CountStep(unknown_bots, dimensions)      # kept from chunk to chunk
        self._apart: _ApartSites | None = None
        self._apart_events: EventWriter | None = None

    def keep_apart(self, db, events: EventWriter | None) -> None:
        """Write the lines of sites whose primary source is not their logs to ``events``
        (an ``events.apart`` writer; None: drop them), reading (and claiming, for a site
        no source has fed yet) each site's primary source in ``db`` once."""
        self._apart, self._apart_events = _ApartSites(db), events

    def map(self, lines: Sequence[tuple[str, int]], default_site: str, stream: int,
            events: EventWriter | None) -> Tally:
        """Tally ``(line, offset)`` pairs (decoded lines, see :func:`split_lines`;
        ``offset``: where the line starts in the pass ``stream``); their events are
        written through ``events`` before returning."""
        parsed = frames.parse(frames.pairs_frame(list(lines)), self.parser)
        return self._map(parsed, default_site, stream, events)

    def map_chunk(self, data: bytes, start: int, default_site: str, stream: int,
                  events: EventWriter | None) -> Tally:
        """``map`` of the lines of ``data``, read from byte ``start`` of the file."""
        parsed = frames.parse(frames.lines_frame(data, start), self.parser)
        return self._map(parsed, default_site, stream, events)

    def _map(self, parsed: pl.DataFrame, default_site: str, stream: int,
             events: EventWriter | None) -> Tally:
        """The tally of parsed lines (``frames.parse``: a row per line, the lines'
        text already let go)."""
        tally = Tally(lines=parsed.height)
        if events is not None:
            events.totals = tally.events = EventTotals()
        tally.tolerated.update(self.parser.tolerated)
        self.parser.tolerated.clear()
        refused = pl.col("reason").is_not_null()
        _count(tally.rejected, parsed.filter(refused), "reason")
        parsed = parsed.filter(~refused)
        undecodable = parsed["undecodable"].sum()
        if undecodable:
            tally.tolerated[UNDECODABLE] += undecodable
        parsed = self._named(parsed, default_site, tally.rejected)
        if self._apart is not None and parsed.height:
            apart = lookup(parsed, ["site"], self._apart.__getitem__, pl.Boolean,
                                  name="apart")
            kept = parsed.filter(apart)
            _count(tally.apart, kept, "site")
            if kept.height and self._apart_events is not None:
                _write(self._apart_events, kept, stream)
            parsed = parsed.filter(~apart)
        counted = self.step.count(parsed)
        tally.hits, tally.bots, tally.units = counted.hits, counted.bots, counted.units
        tally.sites.update(counted.sites)
        tally.parsed, tally.first, tally.last = parsed.height, counted.first, counted.last
        if events is not None and parsed.height:
            _write(events, parsed, stream)
        return tally

    def _named(self, parsed: pl.DataFrame, default_site: str, rejected: Counter
               ) -> pl.DataFrame:
        """The lines with a valid site and page (``site``, ``page``), the others
        counted among ``rejected``: each checked once per distinct value."""
        if self.site is not None:
            site = pl.lit(self.site).alias("site")
        else:
            default = self._site(default_site)
            site = lookup(parsed, ["vhost"], lambda vhost: self._site(vhost) if vhost
                                 else default, pl.String, name="site")
        parsed = parsed.with_columns(site)
        if (bad := parsed["site"].null_count()):
            rejected["bad_site"] += bad
            parsed = parsed.drop_nulls("site")
        names = self._names
        parsed = parsed.with_columns(lookup(
            parsed, ["site", "path"], lambda site, path: names[site, path]
            if (site, path) in names else self._validate(site, path), pl.String,
            name="page"))
        if (bad := parsed["page"].null_count()):
            rejected["bad_target"] += bad
            parsed = parsed.drop_nulls("page")
        return parsed

    def _site(self, name: str) -> str | None:
        if name not in self._sites:
            try:
                self._sites[name] = validation.site(name)
            except InvalidSiteError:
                self._sites[name] = None
        return self._sites[name]

    def _validate(self, site: str, page: str) -> str | None:
        """The recorder's name of ``page``, None for a page that cannot be one."""
        if len(self._names) >= MAX_NAMES:
            self._names.clear()
        try:
            name = validation.page(page)
        except InvalidPageError:
            name = None
        self._names[(site, page)] = name
        return name


class _ApartSites(dict):
    """Site -> whether its lines are kept apart (its primary source is not its logs),
    read once per site and mapper."""

    def __init__(self, db):
        super().__init__()
        self.db = db

    def __missing__(self, site: str) -> bool:
        apart = self[site] = primary_source(self.db, site, "log") != "log"
        return apart


def _count(counter: Counter, lines: pl.DataFrame, column: str) -> None:
    for value, n in lines.group_by(column, maintain_order=True).len().iter_rows():
        counter[value] += n


def _write(events: EventWriter, lines: pl.DataFrame, stream: int) -> None:
    """The events of ``lines`` (kept: sites and pages valid), in their order."""
    columns = {name: lines[name].to_list() for name in ("time", *LOG_FIELDS)}
    if lines["huge"].null_count() < lines.height:      # sizes past 64 bits, as they are
        columns["bytes"] = [size if huge is None else int(huge) for size, huge in
                            zip(columns["bytes"], lines["huge"].to_list(), strict=True)]
    events.write_lines(columns, lines["site"].to_list(), stream, lines["offset"].to_list())


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
