"""A figure that says something instead of plotting: no data yet, loading, an error."""

from __future__ import annotations

import plotly.graph_objects as go

from .theme import base_layout, palette


def notice_figure(text: str, theme: str = "light", height: int | None = None) -> go.Figure:
    hidden = {"visible": False}
    layout = base_layout(
        theme, xaxis=hidden, yaxis=hidden, showlegend=False,
        annotations=[{"text": text, "showarrow": False, "xref": "paper", "yref": "paper",
                      "x": 0.5, "y": 0.5, "font": {"size": 15, "color": palette(theme)["muted"]}}],
    )
    if height:
        layout["height"] = height
    return go.Figure(layout=layout)
