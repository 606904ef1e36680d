"""Custom events and goals over a range, from the visits' documents (``ev`` rows): the
sums of its whole UTC months and days, the quarter rows of the days it cuts. Quarter
hours, so a range in any zone is exact but for a quarter it cuts (counted whole, as
visits are: ``visits.reads.is_exact``).

A goal converts on a custom event of its name, or on a pageview of a page its pattern
names: the pageviews the visits are cut from (a page, not an asset, seen by a person;
from a log, a GET answered 2xx or 304), kept as cells beside the events
(``visits.cells.PAGEVIEW``). So a goal's conversions, visitors and rate are of the same
hits and the same quarters, whatever the goal.

Converting visitors are counted from sketches: ``visitors_error`` is the half-width of
their 95 % interval (0: exact, the sketch held every visitor as a list).
Conversion rate: converting visitors / the range's human visitors, in percent.
Revenue: summed per currency, never converted.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from decimal import Decimal

import pandas as pd

from .. import validation
from ..dimensions import sketches
from ..dimensions.visitor_reads import visitors
from ..stats import schema
from ..stats.goals import Goal, matches
from ..visits import cells, store
from ..visits import reads as visit_reads

COLUMNS = ["value", "conversions", "visitors", "conversion_rate", "revenue", "visitors_error"]
Keep = Callable[[str, str, str], bool]      # (name, dim, value): whether a cell is read


def _custom(name: str, _dim: str, _value: str) -> bool:
    return name != cells.PAGEVIEW


def cells_over(db, site: str, start: dt.datetime, end: dt.datetime, keep: Keep = _custom
               ) -> dict[tuple, cells.Cell]:
    """Per ``(name, dim, value)``, the cells of [start, end) that ``keep`` accepts (by
    default the custom events', not the pageviews'), within the caps."""
    site = validation.site(site)
    start, end = validation.time_range(start, end)
    docs, edges = visit_reads.summed_rows(db, site, start, end, f"sums.{store.EVENTS}")
    rows = [row for doc in docs for row in (doc.get("sums") or {}).get(store.EVENTS, ())
            if keep(*row[:3])]
    for lo, hi in edges:
        if lo < hi:
            rows += _quarter_rows(db, site, lo, hi, keep)
    return cells.summed(rows)


def _quarter_rows(db, site: str, start: dt.datetime, end: dt.datetime, keep: Keep
                  ) -> list[list]:
    """The cell rows of the quarters starting in [start, end), without their quarter."""
    lo, hi = schema.epoch_ms(start), schema.epoch_ms(end)
    return [list(rest) for time, *rest in visit_reads.quarter_rows(db, site, start, end,
                                                                   store.EVENTS)
            if lo <= time < hi and keep(*rest[:3])]


def people(db, site: str, start: dt.datetime, end: dt.datetime,
           now: dt.datetime | None = None) -> int:
    """The range's human visitors: what conversion rates divide by."""
    return visitors(db, site, start, end, humans=True, now=now).n


def events(db, site: str, start: dt.datetime, end: dt.datetime,
           now: dt.datetime | None = None, page: str | None = None) -> pd.DataFrame:
    """One row per event name (``COLUMNS``), most conversions first: the whole site's,
    or those sent on ``page``."""
    found = cells_over(db, site, start, end)
    wanted = (cells.TOTAL, "") if page is None else (cells.PAGE, page)
    rows = [_figures(name, cell) for (name, dim, value), cell in found.items()
            if (dim, value) == wanted]
    return _table(rows, people(db, site, start, end, now))


def props(db, site: str, start: dt.datetime, end: dt.datetime, prop: str,
          event: str | None = None, now: dt.datetime | None = None) -> pd.DataFrame:
    """One row per value of the property ``prop`` over every event (or ``event``'s)."""
    wanted = cells.prop_dim(prop)
    merged: dict[str, cells.Cell] = {}
    for (name, dim, value), cell in cells_over(db, site, start, end).items():
        if dim == wanted and (event is None or name == event):
            cells.merge_into(merged, value, cell)
    return _table([_figures(value, cell) for value, cell in merged.items()],
                  people(db, site, start, end, now))


def goals(db, site: str, start: dt.datetime, end: dt.datetime, wanted: Iterable[Goal],
          now: dt.datetime | None = None) -> pd.DataFrame:
    """One row per goal, in the order given: an event goal from its events, a page goal
    from the pageviews of the pages it matches (pages an hour, a day or a month summed
    under ``(other)`` cannot match)."""
    wanted = list(wanted)
    if not wanted:
        return _table([], 0, keep_order=True)
    names = {goal.value for goal in wanted if goal.kind == "event"}
    patterns = [goal.value for goal in wanted if goal.kind == "page"]

    def keep(name: str, dim: str, value: str) -> bool:
        if name == cells.PAGEVIEW:
            return dim == cells.PAGE and any(matches(p, value) for p in patterns)
        return dim == cells.TOTAL and name in names

    found = cells_over(db, site, start, end, keep)
    rows = []
    for goal in wanted:
        if goal.kind == "event":
            rows.append(_figures(goal.label, found.get((goal.value, cells.TOTAL, ""),
                                                       cells.Cell())))
            continue
        viewed = cells.Cell()
        for (name, _, page), cell in found.items():
            if name == cells.PAGEVIEW and matches(goal.value, page):
                viewed.merge(cell)
        rows.append(_figures(goal.label, viewed))
    return _table(rows, people(db, site, start, end, now), keep_order=True)


def _figures(value: str, cell: cells.Cell) -> tuple[str, int, sketches.Estimate, dict]:
    seen = (sketches.Estimate(0) if cell.sketch is None
            else sketches.count([cell.sketch], cells.LG_K))
    return value, cell.events, seen, cell.revenue


def _table(rows: Iterable[tuple[str, int, sketches.Estimate, dict]], people_n: int,
           keep_order: bool = False) -> pd.DataFrame:
    """``rows`` of (value, conversions, visitors, revenue) as a ``COLUMNS`` frame."""
    out = [(value, n, seen.n, round(100 * seen.n / people_n, 1) if people_n else None,
            revenue_text(revenue), seen.error) for value, n, seen, revenue in rows]
    frame = pd.DataFrame(out, columns=COLUMNS)
    if not keep_order:
        frame = frame.sort_values(["conversions", "value"], ascending=[False, True],
                                  ignore_index=True)
    return frame


def revenue_text(revenue: dict[str, Decimal]) -> str:
    """``EUR 49.00, USD 10.5``: each currency's sum, never converted."""
    return ", ".join(f"{currency} {amount}" for currency, amount in sorted(revenue.items()))
