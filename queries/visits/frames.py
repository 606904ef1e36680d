"""Visits cut in Polars: a window's pageviews as one frame (``pageview_frame``: Python per
bucket and per distinct value, never per event), sessionized by a sort and a cumulative
sum (``visits_of``) and tallied per quarter and page by group-by (``tallied``), as
``sessions.sessionize`` and ``sessions.tally`` do one pageview at a time. ``build`` cuts a
log's hours so; a site with custom events or engagements goes through ``sessions``,
whose rules for them (an engagement applies to its visit's last page) are per event.

A frame's rows are in the order its events were read: what feeds the pageviews' sketches
(``pageview_cells``) in the order ``cells.tally`` feeds them, so they keep their bytes.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from ..dimensions import sketches
from ..dimensions.classify import is_bot_agent
from ..events import reads as event_reads
from ..stats import schema
from . import cells
from .build import page_of
from .sessions import QUARTER_MS

COLUMNS = ("host", "user_agent", "path", "method", "status")
SCHEMA = {"visitor": pl.Utf8, "time": pl.Int64, "page": pl.Utf8, "rank": pl.Int64,
          "place": pl.Int64}


def pageview_frame(db, site: str, lo: int, hi: int, unknown_bots: bool,
                   known: dict) -> pl.DataFrame:
    """The site's pageviews among its events of [lo, hi) (ms), as ``build.pageviews``
    chooses them, one row each: ``visitor`` (address and agent as the sketches hash
    them), ``time``, ``page``, and ``rank``, ``place``: its bucket's rank among the
    window's and its index there, which order the requests of one second as recorded."""
    hosts: list = []          # every bucket's distinct values, one after the other
    agents: list = []
    pages: list = []
    names: list[str] = []
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ("time", "host", "agent", "page",
                                                           "bucket", "place")}
    for from_log, times, columns, name, places in event_reads.placed_arrays(
            db, site, schema.from_epoch_ms(lo), schema.from_epoch_ms(hi), COLUMNS):
        host_values, host_codes = columns["host"]
        agent_values, agent_codes = columns["user_agent"]
        paths, path_codes = columns["path"]
        page_values = [page_of(path, known) for path in paths]
        wanted = (np.array([page is not None for page in page_values], dtype=bool)[path_codes]
                  & np.array([not is_bot_agent(agent, unknown_bots) for agent in agent_values],
                             dtype=bool)[agent_codes])
        if from_log:
            wanted &= _answered(columns)
        chosen = np.flatnonzero(wanted)
        if not len(chosen):
            continue
        parts["time"].append(times[chosen])
        parts["place"].append(places[chosen])
        parts["bucket"].append(np.full(len(chosen), len(names), dtype=np.int64))
        for key, values, codes, found in (("host", host_values, host_codes, hosts),
                                          ("agent", agent_values, agent_codes, agents),
                                          ("page", page_values, path_codes, pages)):
            parts[key].append(codes[chosen] + len(found))
            found.extend(values)
        names.append(name)
    if not names:
        return pl.DataFrame(schema=SCHEMA)
    joined = {key: np.concatenate(arrays) for key, arrays in parts.items()}
    ranks = np.empty(len(names), dtype=np.int64)
    ranks[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
    host = pl.Series(hosts, dtype=pl.Utf8).fill_null("").gather(joined["host"])
    agent = pl.Series(agents, dtype=pl.Utf8).fill_null("").gather(joined["agent"])
    return pl.DataFrame({
        "visitor": host + "\x00" + agent,
        "time": joined["time"],
        "page": pl.Series(pages, dtype=pl.Utf8).gather(joined["page"]),
        "rank": ranks[joined["bucket"]],
        "place": joined["place"],
    }, schema=SCHEMA)


def _answered(columns: dict) -> np.ndarray:
    """Per event of a log, whether it is a GET answered 2xx or 304."""
    methods, method_codes = columns["method"]
    statuses, status_codes = columns["status"]
    gets = np.array([m == "GET" for m in methods], dtype=bool)
    good = np.array([s is not None and (200 <= s < 300 or s == 304) for s in statuses],
                    dtype=bool)
    return gets[method_codes] & good[status_codes]


def visits_of(frame: pl.DataFrame, timeout_ms: int) -> pl.DataFrame:
    """The visits of a frame of pageviews: ``start``, ``last`` (ms), ``entry``, ``exit``,
    ``views``; a visitor's pageviews in time order (then as recorded), a new visit after
    each gap over ``timeout_ms``, as ``sessions.sessionize``."""
    breaks = ((pl.col("visitor") != pl.col("visitor").shift(1))
              | (pl.col("time").diff() > timeout_ms)).fill_null(True)
    return (frame.sort("visitor", "time", "rank", "place")
            .with_columns(visit=breaks.cum_sum())
            .group_by("visit")
            .agg(start=pl.col("time").first(), last=pl.col("time").last(),
                 entry=pl.col("page").first(), exit=pl.col("page").last(),
                 views=pl.len().cast(pl.Int64)))


def any_visit(visits: pl.DataFrame, condition: pl.Expr) -> bool:
    return visits.filter(condition).height > 0


def tallied(visits: pl.DataFrame, inside: pl.DataFrame
            ) -> tuple[dict[int, list[int]], dict[str, dict]]:
    """``sessions.tally`` of the ``visits`` and pageviews ``inside`` (frames), the same
    dicts, built from the group-bys' rows."""
    quarter = pl.col("start") - pl.col("start") % QUARTER_MS
    visits = visits.with_columns(q=quarter, bounce=(pl.col("views") == 1).cast(pl.Int64),
                                 duration=pl.col("last") - pl.col("start"))
    inside = inside.with_columns(q=pl.col("time") - pl.col("time") % QUARTER_MS)
    quarters: dict[int, list[int]] = {
        q: [n, bounces, duration, views, 0] for q, n, bounces, duration, views in
        visits.group_by("q").agg(pl.len(), pl.col("bounce").sum(), pl.col("duration").sum(),
                                 pl.col("views").sum()).iter_rows()}
    pages: dict[str, dict] = {"entry": {}, "exit": {}, "views": {}}
    for kind in ("entry", "exit"):
        pages[kind] = {(q, page): [n, bounces, duration] for q, page, n, bounces, duration in
                       visits.group_by("q", kind).agg(pl.len(), pl.col("bounce").sum(),
                                                      pl.col("duration").sum()).iter_rows()}
    for q, page, n in inside.group_by("q", "page").len().iter_rows():
        pages["views"][(q, page)] = [n]
        row = quarters.get(q)
        if row is None:
            row = quarters[q] = [0, 0, 0, 0, 0]
        row[4] += n
    return quarters, pages


def pageview_cells(inside: pl.DataFrame) -> dict[tuple, cells.Cell]:
    """``cells.tally`` of the pageviews ``inside`` (a frame in read order): each cell's
    count by group-by, its sketch fed each visitor once, in the order of their first
    pageview there (a visitor seen again changes no sketch, so the bytes are those of
    feeding every pageview)."""
    inside = inside.select(pl.col("time") - pl.col("time") % QUARTER_MS, "page", "visitor")
    found = {(q, cells.PAGEVIEW, cells.PAGE, page): cells.Cell(n) for q, page, n in
             inside.group_by("time", "page", maintain_order=True).len().iter_rows()}
    firsts = inside.unique(subset=["time", "page", "visitor"], keep="first",
                           maintain_order=True)
    for q, page, visitor in firsts.iter_rows():
        cell = found[(q, cells.PAGEVIEW, cells.PAGE, page)]
        if cell.sketch is None:
            cell.sketch = sketches.new(cells.LG_K)
        cell.sketch.update(visitor)
    return found
