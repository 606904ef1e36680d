"""A log's parsed lines counted by dimensions apart from any recorder, as a Polars frame:
what an ingest's mapper hands over (``queries.ingest.mapper``), in the
DimensionRecorder's pending format (``counters``)."""

from __future__ import annotations

import polars as pl

from ..ingest.frames import lookup
from .classify import RecordCoder

# The columns a line's dimensions are read from (``LogRecord``'s fields and its site).
COLUMNS = ("site", "time", "referrer", "vhost", "query", "user_agent", "host", "path",
           "status")
_HOUR = ("site", "year", "month", "day", "hour")
_KEY = tuple(f"k{i}" for i in range(len(RecordCoder.PARTS)))


def pending(coder: RecordCoder, lines: pl.DataFrame) -> dict:
    """{hour unit: ({values: hits}, {(visitor, values)})}, the DimensionRecorder's
    pending units (``counters._add`` keeps them so), of ``lines`` (:data:`COLUMNS`).

    Each part of a line's ``RecordCoder`` key is classified once per distinct input and
    joined back; hits are counted per (site, UTC hour, key) by a group-by, in the order
    they first appear (a capped counter keeps the values its batch meets first), and
    visitors gathered per distinct (hour, address, agent, key). A visitor is its address
    and agent, joined into the sketches' string once per visitor."""
    if lines.height == 0:
        return {}
    time = pl.col("time")
    keyed = lines.select(
        "site", time.dt.year().alias("year"), time.dt.month().alias("month"),
        time.dt.day().alias("day"), time.dt.hour().alias("hour"), "host", "user_agent",
        *(lookup(lines, list(inputs), coder.numbering(part), pl.UInt32, name=name)
          for name, (part, inputs) in zip(_KEY, RecordCoder.PARTS.items(), strict=True)))
    values = coder.values
    out: dict[tuple, tuple[dict, set]] = {}
    counts = keyed.group_by([*_HOUR, *_KEY], maintain_order=True).len()
    for site, year, month, day, hour, *key, n in counts.iter_rows():
        unit = ("u", site, year, month, day, hour)
        part = out.get(unit)
        if part is None:
            part = out[unit] = ({}, set())
        part[0][values(tuple(key))] = n
    visitors: dict[tuple, str] = {}
    visits = keyed.select(*_HOUR, "host", "user_agent", *_KEY).unique()
    for site, year, month, day, hour, host, agent, *key in visits.iter_rows():
        visitor = visitors.get((host, agent))
        if visitor is None:
            visitor = visitors[host, agent] = f"{host or ''}\x00{agent or ''}"
        out["u", site, year, month, day, hour][1].add((visitor, values(tuple(key))))
    return out
