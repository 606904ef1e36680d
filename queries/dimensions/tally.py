"""A log's parsed lines counted by dimensions apart from any recorder, as a Polars frame:
what an ingest's mapper hands over (``queries.ingest.mapper``), in the
DimensionRecorder's pending format (``counters``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import islice, repeat

import polars as pl

from .classify import RecordCoder

# The columns a line's dimensions are read from (``LogRecord``'s fields and its site).
COLUMNS = ("site", "time", "referrer", "vhost", "query", "user_agent", "host", "path",
           "status")
_SCHEMA = {"site": pl.String, "time": pl.Datetime("us", "UTC"), "referrer": pl.String,
           "vhost": pl.String, "query": pl.String, "user_agent": pl.String, "host": pl.String,
           "path": pl.String, "status": pl.Int64}
_HOUR = ("site", "year", "month", "day", "hour")
_KEY = tuple(f"k{i}" for i in range(len(RecordCoder.PARTS)))


def pending(coder: RecordCoder, lines: pl.DataFrame) -> dict:
    """{hour unit: ({values: hits}, {(visitor, values)})}, the DimensionRecorder's
    pending units (``counters._add`` keeps them so), of ``lines`` (:data:`COLUMNS`;
    optional: ``n``, the hits a row stands for, else one; ``country``, a country given
    with the hit, else its address's).

    Each part of a line's ``RecordCoder`` key is classified once per distinct input and
    joined back; hits are counted per (site, UTC hour, key) by a group-by, in the order
    they first appear (a capped counter keeps the values its batch meets first), and
    visitors gathered per distinct (hour, address, agent, key), a visitor being its
    address and agent joined into the sketches' string. The units' dicts and sets are
    built from the columns in C (``zip``, ``map``): Python runs per unit."""
    if lines.height == 0:
        return {}
    time = pl.col("time")
    weighted = "n" in lines.columns
    keyed = lines.select(
        "site", time.dt.year().alias("year"), time.dt.month().alias("month"),
        time.dt.day().alias("day"), time.dt.hour().alias("hour"), "host", "user_agent",
        *(lookup(lines, columns, coder.numbering(part), pl.UInt32, name=name)
          for name, (part, columns) in zip(_KEY, map(_inputs, RecordCoder.PARTS.items(),
                                                     repeat(lines.columns)), strict=True)),
        *(["n"] if weighted else []))
    units = keyed.select(_HOUR).unique(maintain_order=True).with_row_index("unit")
    keyed = keyed.join(units, on=list(_HOUR), how="left", maintain_order="left")
    groups = keyed.group_by(["unit", *_KEY], maintain_order=True)
    counts = (groups.agg(pl.col("n").sum().alias("len")) if weighted else groups.len()).sort(
        "unit", maintain_order=True)
    visitor = pl.concat_str(pl.col("host").fill_null(""), pl.lit("\x00"),
                            pl.col("user_agent").fill_null("")).alias("visitor")
    visits = keyed.select("unit", visitor, *_KEY).unique().sort("unit")
    hits, values = counts["len"].to_list(), list(map(coder.values, _keys(counts)))
    visitors = zip(visits["visitor"].to_list(), map(coder.values, _keys(visits)),
                   strict=True)
    out: dict[tuple, tuple[dict, set]] = {}
    start = 0
    for (_, *hour), n, seen in zip(units.iter_rows(), _runs(counts), _runs(visits),
                                   strict=True):
        out["u", *hour] = (dict(zip(values[start:start + n], hits[start:start + n],
                                    strict=True)), set(islice(visitors, seen)))
        start += n
    return out


def _inputs(part: tuple[str, tuple[str, ...]], columns: list[str]) -> tuple[str, list[str]]:
    """A key part's numbering and its input columns: a country given with the hits
    (a ``country`` column) replaces the address's."""
    name, inputs = part
    if name == "country" and "country" in columns:
        return "drawn", ["host", "country"]
    return name, list(inputs)


def _runs(frame: pl.DataFrame) -> list[int]:
    """The rows of each unit of ``frame`` (sorted by unit, every unit there)."""
    return frame["unit"].rle().struct.field("len").to_list()


def _keys(frame: pl.DataFrame):
    return zip(*(frame[name].to_list() for name in _KEY), strict=True)


class LogTally:
    """Parsed lines given as columns (``queries.ingest.logformat.columns``), a batch at a
    time, counted by :func:`pending` once they are all in: for callers holding records
    rather than a chunk's frame."""

    def __init__(self, coder: RecordCoder | None = None):
        self.coder = RecordCoder() if coder is None else coder
        self._frames: list[pl.DataFrame] = []

    def add_lines(self, sites: Sequence[str], lines: dict[str, Sequence]) -> None:
        columns = {"site": list(sites), **{name: list(lines[name]) for name in COLUMNS[1:]}}
        self._frames.append(pl.DataFrame(columns, schema=_SCHEMA))

    def pending(self) -> dict:
        return pending(self.coder, pl.concat(self._frames)) if self._frames else {}


def lookup(frame: pl.DataFrame, keys: list[str], function: Callable, dtype,
           where: pl.Expr | None = None, name: str | None = None) -> pl.Series:
    """``function`` of each row's ``keys`` columns, called once per distinct value (of
    the rows ``where`` holds; null for the others) and joined back, in row order."""
    given = frame.select(keys)
    distinct = (given if where is None else frame.filter(where).select(keys)).unique(
        maintain_order=True)
    values = [function(*row) for row in distinct.iter_rows()]
    if len(values) == 1 and where is None:      # one site, no virtual hosts...
        return pl.repeat(values[0], frame.height, dtype=dtype, eager=True).alias(
            name or keys[0])
    table = distinct.with_columns(pl.Series("_value", values, dtype=dtype))
    joined = given.join(table, on=keys, how="left", nulls_equal=True, maintain_order="left")
    return joined["_value"].alias(name or keys[0])
