"""The totals table of the historical page: hits per page, previous period, change."""

from __future__ import annotations

import math

import pandas as pd
from dash import html

from .legend import page_colors, page_label
from .numbers import NO_VALUE, count, percent


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


def totals_table(current: pd.DataFrame, previous: pd.DataFrame | None = None,
                 pages: list[str] | tuple[str, ...] = (), table_id: str | None = None,
                 previous_title: str = "Previous period"):
    """One row per column of ``current`` (a series frame): its total and, with a
    compared period (``previous_title``), its total and the change."""
    colors = page_colors(list(pages) or list(current.columns))
    head = ["Page", "Hits"] + ([previous_title, "Change"] if previous is not None else [])
    rows = []
    for page in current.columns:
        total = int(current[page].sum())
        cells = [html.Td([html.Span(className="swatch", style={"background": colors.get(page)}),
                          page_label(page)], className="page-cell"),
                 html.Td(count(total), className="num")]
        if previous is not None:
            before = int(previous[page].sum()) if page in previous else 0
            change = change_percent(total, before)
            trend = "" if change is None else ("up" if change > 0 else "down" if change < 0 else "")
            cells += [html.Td(count(before), className="num"),
                      html.Td(format_change(change, total), className=f"num change {trend}")]
        rows.append(html.Tr(cells))
    props = {"id": table_id} if table_id else {}
    return html.Table(className="totals", children=[
        html.Thead(html.Tr([html.Th(h) for h in head])), html.Tbody(rows)], **props)
