"""Top pages: a horizontal bar per page, most visited on top."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from .legend import OTHER_COLOR, page_colors
from .theme import base_layout
from .timeseries import _escape

MAX_LABEL = 32


def top_pages_figure(top: pd.DataFrame, *, theme: str = "light",
                     pages: list[str] | tuple[str, ...] = (),
                     uirevision: str | None = None) -> go.Figure:
    """``top`` as ``queries.top_pages`` returns it (index ``page``, column ``hits``).
    Selected pages keep their colour; the others are grey."""
    colors = page_colors(list(pages))
    names = [str(p) for p in top.index]
    labels = [_short(p) for p in names]
    hits = top["hits"].to_numpy() if "hits" in top else []
    trace = {
        "type": "bar", "orientation": "h", "x": hits, "y": names,
        "marker": {"color": [colors.get(p, OTHER_COLOR) if pages else colors["*"]
                             for p in names]},
        "text": [f"{h:,}" for h in hits], "textposition": "auto",
        "customdata": [_escape(p) for p in names],
        "hovertemplate": "%{customdata}: %{x:,} hits<extra></extra>",
    }
    layout = base_layout(
        theme, showlegend=False, uirevision=uirevision, bargap=0.25,
        height=max(160, 34 * len(names) + 40),
        yaxis={"autorange": "reversed", "type": "category", "rangemode": None,
               "tickvals": names, "ticktext": labels},
        xaxis={"tickformat": ",d", "rangemode": "tozero"},
    )
    return go.Figure(data=[trace], layout=layout)


def _short(page: str) -> str:
    return page if len(page) <= MAX_LABEL else page[: MAX_LABEL - 1] + "…"
