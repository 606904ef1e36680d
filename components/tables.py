"""The totals table of the historical page: hits (or a visit metric) per page, previous
period, change."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import pandas as pd
from dash import html

from .legend import page_colors, page_label
from .numbers import MINUS, NO_VALUE, count, percent


def change_percent(current: int, previous: int) -> float | None:
    """Change from ``previous`` to ``current`` in %; None when there was nothing before."""
    if previous == 0:
        return None
    return (current - previous) / previous * 100


def format_change(change: float | None, current: int = 0) -> str:
    if change is None:
        return "new" if current else NO_VALUE
    if math.isclose(change, 0, abs_tol=0.05):
        return "0.0 %"
    return percent(change, signed=True)


def format_points(points: float | None) -> str:
    """A rate's change, in percentage points: 4.2 % → 21.6 % is ``+17.4 pts`` (not
    ``+409.6 %``, a change of a change)."""
    if points is None or math.isnan(points):
        return NO_VALUE
    if math.isclose(points, 0, abs_tol=0.05):
        return "0.0 pts"
    return f"{points:+,.1f} pts".replace("-", MINUS)


def totals_table(current: pd.DataFrame, previous: pd.DataFrame | None = None,
                 pages: list[str] | tuple[str, ...] = (), table_id: str | None = None,
                 previous_title: str = "Previous period", measure: str = "Hits",
                 totals: Mapping | None = None, previous_totals: Mapping | None = None,
                 shown: Callable[[object], str] = count, rate: bool = False):
    """One row per column of ``current`` (a series frame): its total (``totals``: the
    range's own figure per column, for a rate or a mean, which is no sum) and, with a
    compared period (``previous_title``), its total and the change (``rate``: totals in
    %, whose change is in percentage points)."""
    colors = page_colors(list(pages) or list(current.columns))
    head = ["Page", measure] + ([previous_title, "Change"] if previous is not None else [])
    rows = []
    for page in current.columns:
        total = totals.get(page) if totals is not None else int(current[page].sum())
        cells = [html.Td([html.Span(className="swatch", style={"background": colors.get(page)}),
                          page_label(page)], className="page-cell", title=page_label(page)),
                 html.Td(shown(total), className="num")]
        if previous is not None:
            if previous_totals is not None:
                before = previous_totals.get(page)
            else:
                before = int(previous[page].sum()) if page in previous else 0
            if total is None or before is None:
                change = None
            else:
                change = total - before if rate else change_percent(total, before)
            trend = "" if change is None else ("up" if change > 0 else "down" if change < 0 else "")
            text = format_points(change) if rate else format_change(change, total or 0)
            cells += [html.Td(shown(before), className="num"),
                      html.Td(text, className=f"num change {trend}")]
        rows.append(html.Tr(cells))
    props = {"id": table_id} if table_id else {}
    return html.Table(className="totals", children=[
        html.Thead(html.Tr([html.Th(h) for h in head])), html.Tbody(rows)], **props)
