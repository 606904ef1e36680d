"""Hits over time: DataFrame in (the shape ``queries.series`` returns), ``go.Figure`` out.

The chart shows wall-clock times of the frame's time zone, so hovering a point reads the
local time the viewer chose. The previous period, when given, is drawn on the same axis
(bucket *i* of the previous period under bucket *i* of the current one); the CSV export
uses :func:`plotted_frame`, the very numbers the figure draws.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from .legend import page_colors, page_label
from .theme import base_layout

MODES = ("lines", "stacked")
HOVER_FORMAT = {"minute": "%a %d %b %Y %H:%M", "hour": "%a %d %b %Y %H:00",
                "day": "%a %d %b %Y"}
PREVIOUS_PREFIX = "previous "


def aligned_previous(current: pd.DataFrame, previous: pd.DataFrame | None) -> pd.DataFrame | None:
    """The previous period's counts placed on the current period's buckets, by position
    (a previous period with fewer buckets, across a DST change, leaves the tail empty)."""
    if previous is None:
        return None
    values = previous.reindex(columns=current.columns, fill_value=0).iloc[:len(current)]
    aligned = pd.DataFrame(values.to_numpy(), columns=current.columns,
                           index=current.index[:len(values)])
    return aligned.reindex(current.index).astype("Int64")


def plotted_frame(current: pd.DataFrame, previous: pd.DataFrame | None = None) -> pd.DataFrame:
    """What the chart draws, one column per series: ``time`` (local, ISO 8601 with its
    offset), one column per page, and with a previous period ``previous time`` and one
    ``previous <page>`` column per page."""
    table = pd.DataFrame({"time": [t.isoformat() for t in current.index]})
    for page in current.columns:
        table[page_label(page)] = current[page].to_numpy()
    if previous is not None:
        table["previous time"] = ([t.isoformat() for t in previous.index[:len(current)]]
                                  + [""] * max(len(current) - len(previous), 0))
        aligned = aligned_previous(current, previous)
        for page in current.columns:
            table[PREVIOUS_PREFIX + page_label(page)] = aligned[page].to_numpy()
    return table


def timeseries_figure(current: pd.DataFrame, *, granularity: str, theme: str = "light",
                      pages: list[str] | tuple[str, ...] = (), mode: str = "lines",
                      previous: pd.DataFrame | None = None, uirevision: str | None = None,
                      height: int | None = None) -> go.Figure:
    """One line (or stacked area) per column of ``current``; dashed lines for the
    previous period. ``pages`` fixes the colour order (the view's selection)."""
    colors = page_colors(list(pages) or list(current.columns))
    x = _wall_times(current.index)
    traces = []
    for page in current.columns:
        trace = {"type": "scatter", "x": x, "y": current[page].to_numpy(),
                 "name": page_label(page), "mode": "lines",
                 "line": {"color": colors.get(page), "width": 2},
                 "hovertemplate": f"{_escape(page_label(page))}: %{{y:,}}<extra></extra>"}
        if mode == "stacked":
            trace.update(stackgroup="current", line={"color": colors.get(page), "width": 1})
        traces.append(trace)
    if previous is not None:
        aligned = aligned_previous(current, previous)
        when = [t.strftime(HOVER_FORMAT[granularity]) for t in previous.index[:len(current)]]
        for page in current.columns:
            label = page_label(page)
            traces.append({
                "type": "scatter", "x": x, "y": aligned[page].to_numpy(dtype=float,
                                                                      na_value=float("nan")),
                "name": f"{label} (previous)", "mode": "lines", "opacity": 0.6,
                "line": {"color": colors.get(page), "width": 1.5, "dash": "dot"},
                "customdata": when,
                "hovertemplate": f"{_escape(label)} previous (%{{customdata}}): %{{y:,}}"
                                 "<extra></extra>",
            })
    layout = base_layout(
        theme, hovermode="x unified", uirevision=uirevision, showlegend=True,
        legend={"traceorder": "normal"},
        xaxis={"hoverformat": HOVER_FORMAT[granularity], "type": "date"},
        yaxis={"title": {"text": f"hits per {granularity}"}, "tickformat": ",d"},
    )
    if height:
        layout["height"] = height
    return go.Figure(data=traces, layout=layout)


def _wall_times(index: pd.DatetimeIndex) -> list[str]:
    """Local wall-clock times as ISO strings without offset: Plotly draws them as given."""
    fmt = "%Y-%m-%d" if _all_midnight(index) else "%Y-%m-%d %H:%M"
    return [t.strftime(fmt) for t in index]


def _all_midnight(index: pd.DatetimeIndex) -> bool:
    return len(index) > 0 and bool(((index.hour == 0) & (index.minute == 0)).all())


def _escape(text: str) -> str:
    """Page names are user data: keep Plotly from reading them as template or markup."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("{", "&#123;").replace("}", "&#125;"))
