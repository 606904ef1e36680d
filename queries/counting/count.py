"""The one count step every source calls: rows of hits in (a log chunk's parsed lines,
a batch of the beacon's journaled page views, a tick or a day of the load generator's
visits), classified, counted per page and minute (the bots among them apart) and per
site, hour and dimension (with the visitors), as the recorders' pending units.

Rows are a Polars frame: ``site``, ``page`` (both valid), ``time`` (UTC), and the
columns of ``queries.dimensions.tally.COLUMNS`` a hit's dimensions are read from;
optionally ``n`` (the hits a row stands for, else one) and ``country`` (a country drawn
with a synthetic hit, else its address's). Classification runs once per distinct value
(an agent, a referrer, an address), counting as group-bys: Python runs per distinct
value and per unit counted, never per row. Counting and writing are apart: a
:class:`Counted` is handed to the recorders (``into``) where and when its caller's
exactly-once protocol says (the ingest merges tallies in file order, the journal feeds a
batch before its numbered flush), and raw events stay the caller's, named by its
protocol.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field

import polars as pl

from ..dimensions.classify import RecordCoder, is_bot_agent
from ..dimensions.tally import COLUMNS, lookup, pending

MAX_AGENTS = 100_000     # user agents whose bot flag is remembered

_UNIT = ["site", "page", "year", "month", "day"]


@dataclass
class Counted:
    """What rows amount to, in the recorders' pending formats."""
    hits: dict = field(default_factory=dict)    # HitRecorder: (site, page, y, m, d) -> {minute: n}
    bots: dict = field(default_factory=dict)    # the bot hits among them, the same way
    units: dict = field(default_factory=dict)   # DimensionRecorder: hour unit -> unit
    sites: Counter = field(default_factory=Counter)     # hits per site
    first: dt.datetime | None = None
    last: dt.datetime | None = None

    @property
    def total(self) -> int:
        return sum(self.sites.values())

    def into(self, hits, dimensions=None) -> None:
        """Hand the counts to a HitRecorder and a DimensionRecorder (each if given)."""
        if hits is not None and self.hits:
            hits.add_pending(self.hits, self.bots)
        if dimensions is not None and self.units:
            dimensions.add_pending(self.units)


class CountStep:
    """Counts rows (:meth:`count`). Keeps what it classified from call to call: each
    agent's bot flag, and the dimension coder until it is full. ``unknown_bots``: rows
    without a user agent are bots. ``dimensions`` False counts hits alone."""

    def __init__(self, unknown_bots: bool = False, dimensions: bool = True):
        self.unknown_bots, self.dimensions = unknown_bots, dimensions
        self._bots = _BotAgents(unknown_bots)
        self._coder: RecordCoder | None = None

    def count(self, rows: pl.DataFrame) -> Counted:
        counted = Counted()
        if rows.height == 0:
            return counted
        self._hits(rows, counted)
        if self.dimensions:
            columns = [*COLUMNS, *(c for c in ("n", "country") if c in rows.columns)]
            counted.units = pending(self._chunk_coder(), rows.select(columns))
        return counted

    def _hits(self, rows: pl.DataFrame, counted: Counted) -> None:
        """The hits (and the bots among them) per (site, page, UTC day) and minute,
        the sites' hits and the first and last times: counted by group-bys."""
        time = pl.col("time")
        weighted = "n" in rows.columns
        day = rows.select(
            "site", "page", time.dt.year().alias("year"), time.dt.month().alias("month"),
            time.dt.day().alias("day"),
            (time.dt.hour().cast(pl.Int32) * 60 + time.dt.minute()).alias("minute"),
            lookup(rows, ["user_agent"], self._bots.__getitem__, pl.Boolean, name="bot"),
            *(["n"] if weighted else []))
        counted.hits.update(_minutes(day))
        counted.bots.update(_minutes(day.filter("bot")))
        sites = day.group_by("site", maintain_order=True)
        for site, n in (sites.agg(pl.col("n").sum()) if weighted else sites.len()).iter_rows():
            counted.sites[site] += n
        first, last = rows.select(time.min().alias("first"), time.max().alias("last")).row(0)
        counted.first, counted.last = first.replace(tzinfo=dt.UTC), last.replace(tzinfo=dt.UTC)

    def _chunk_coder(self) -> RecordCoder:
        """The coder of the next rows: the last one's, until it is full."""
        if self._coder is None or self._coder.full:
            self._coder = RecordCoder(self.unknown_bots)   # what it knew is classified again
        return self._coder


class _BotAgents(dict):
    """User agent -> whether it is a bot, classified on first sight (agents repeat: a
    dictionary look-up per distinct agent of a call), forgotten past ``MAX_AGENTS``."""

    def __init__(self, unknown_bots: bool):
        super().__init__()
        self.unknown_bots = unknown_bots

    def __missing__(self, agent: str | None) -> bool:
        if len(self) >= MAX_AGENTS:
            self.clear()
        bot = self[agent] = is_bot_agent(agent, self.unknown_bots)
        return bot


def _minutes(day: pl.DataFrame) -> dict:
    """{(site, page, year, month, day): {minute: hits}} of rows' ``day`` columns (with
    ``n``, the hits each stands for), in the order they first appear: counted by a
    group-by, the groups of a key made contiguous by a stable sort on where the key
    first appears; Python runs per key."""
    groups = day.group_by([*_UNIT, "minute"], maintain_order=True)
    counted = (groups.agg(pl.col("n").sum().alias("len")) if "n" in day.columns
               else groups.len()).with_row_index("i")
    counted = counted.with_columns(pl.col("i").min().over(_UNIT).alias("first")).sort(
        "first", maintain_order=True)
    runs = counted["first"].rle().struct.unnest()
    keys = counted.select(_UNIT).gather(runs["len"].cum_sum() - runs["len"])
    minutes, hits = counted["minute"].to_list(), counted["len"].to_list()
    out, start = {}, 0
    for key, n in zip(keys.iter_rows(), runs["len"].to_list(), strict=True):
        out[key] = dict(zip(minutes[start:start + n], hits[start:start + n], strict=True))
        start += n
    return out
