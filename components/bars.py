"""Top pages: a ranked table, most visited first, each row a bar behind the page's name.

Plain HTML (the History panels' ``bd-*`` table), so the browser lays it out at any
width: a name too long for its column ends in an ellipsis (the full name is its title),
and the count column keeps its width, so every count stays whole, on a phone too.
"""

from __future__ import annotations

import pandas as pd
from dash import html

from .legend import OTHER_COLOR, page_colors
from .numbers import count

MAX_LABEL = 200  # characters sent for a name; the column's width cuts it with "…"


def top_pages_table(top: pd.DataFrame, *, pages: list[str] | tuple[str, ...] = (),
                    empty: str = "No hits today yet") -> html.Table:
    """``top`` as ``queries.top_pages`` returns it (index ``page``, column ``hits``).
    Selected pages keep their colour; the others are grey."""
    colors = page_colors(list(pages))
    names = [str(p) for p in top.index]
    hits = [int(h) for h in top["hits"]] if "hits" in top else []
    most = max(hits, default=0)
    rows = []
    for name, n in zip(names, hits, strict=True):
        color = colors.get(name, OTHER_COLOR) if pages else colors["*"]
        width = f"{100 * n / most:.1f}%" if most else "0%"
        rows.append(html.Tr(className="bd-row", children=[
            html.Td(className="bd-value", children=[
                html.Div(className="bd-bar", style={"width": width, "background": color}),
                html.Span(_short(name), title=name)]),
            html.Td(count(n), className="num"),
        ]))
    return html.Table(className="bd-table top-pages", children=[
        html.Thead(html.Tr([html.Th("Page"), html.Th("Hits", className="num")])),
        html.Tbody(rows or [html.Tr(html.Td(empty, colSpan=2, className="muted"))]),
    ])


def _short(page: str) -> str:
    return page if len(page) <= MAX_LABEL else page[: MAX_LABEL - 1] + "…"
