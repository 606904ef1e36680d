"""Presenter mode's pieces: big KPIs, the ticker, the re-ranking top list and the figures
of its views, sized to be read from the back of a room (sizes live in assets/present.css;
figures use large fonts and high-contrast colours)."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pandas as pd
import plotly.graph_objects as go
from dash import html

from .numbers import NO_VALUE, count, percent
from .plotly_text import escape
from .presenter_notes import TOP_PX
from .theme import FONT
from .timeaxis import time_axis
from .timeseries import integer_ticks

COLORS = {
    "dark": {"text": "#ffffff", "muted": "#c8d0d8", "grid": "#2a3038", "accent": "#4dd0ff",
             "fill": "rgba(77,208,255,0.22)", "on_accent": "#000000"},
    "light": {"text": "#000000", "muted": "#2f3640", "grid": "#d5dae0", "accent": "#0047b3",
              "fill": "rgba(0,71,179,0.15)", "on_accent": "#ffffff"},
}
CONFIG = {"displayModeBar": False, "responsive": True, "scrollZoom": False}
COUNTS = {"tickformat": ",d"}     # an axis of counts, thousands separated as on Live


def colors(theme: str) -> dict[str, str]:
    return COLORS.get(theme, COLORS["dark"])


def big_number(value: int | None) -> str:
    return count(value)


def change_text(change: float | None) -> str:
    """``+12 %`` / ``−3 %``; a dash when yesterday had no hits to compare with."""
    if change is None:
        return NO_VALUE
    return percent(change, 1 if abs(change) < 10 else 0, signed=True)


def kpi(kpi_id: str, label: str, value: str, sub: str, tone: str = "") -> html.Div:
    return html.Div(className=f"present-kpi {tone}".strip(), id=kpi_id, children=[
        html.Div(label, className="present-kpi-label"),
        html.Div(value, className="present-kpi-value"),
        html.Div(sub, className="present-kpi-sub"),
    ])


def ticker_items(rows: list[dict], tz: str) -> list[html.Li]:
    """One line per request, newest first, keyed by event id so React keeps the old
    lines and only the new ones mount (and slide in, see present.css)."""
    zone = ZoneInfo(tz)
    if not rows:
        return [html.Li("Waiting for requests…", key="empty", className="present-ticker-empty")]
    return [html.Li(key=row["id"], className="present-ticker-item", children=[
        html.Span(row["time"].astimezone(zone).strftime("%H:%M:%S"), className="t-time"),
        html.Span(row["page"], className="t-page"),
        html.Span(row["referrer"], className="t-ref"),
        html.Span(row["country"] or "", className="t-country"),
    ]) for row in rows]


def top_items(top: pd.DataFrame) -> list[html.Li]:
    """Pages as rows keyed by page, so a re-ranking moves the existing rows (animated
    by present.js) instead of replacing them; the bar's width is its share of the top."""
    if not len(top):
        return [html.Li("No page views yet today", key="empty",
                        className="present-top-empty")]
    peak = max(int(top["hits"].max()), 1)
    return [html.Li(key=f"p:{page}", className="present-top-item", **{"data-key": page},
                    children=[
        html.Span(f"{rank}", className="r-rank"),
        html.Span(page, className="r-page"),
        html.Span(count(hits), className="r-hits"),
        html.Span(className="r-bar", style={"width": f"{100 * int(hits) / peak:.1f}%"}),
    ]) for rank, (page, hits) in enumerate(top["hits"].items(), start=1)]


def _layout(theme: str, xaxis: dict | None = None, yaxis: dict | None = None,
            **extra) -> dict:
    """The presenter's layout; ``xaxis``/``yaxis`` add to its axes' colours and sizes."""
    c = colors(theme)
    axis = {"gridcolor": c["grid"], "linecolor": c["grid"], "color": c["muted"],
            "zeroline": False, "tickfont": {"size": 22}, "automargin": True}
    return {"paper_bgcolor": "rgba(0,0,0,0)", "plot_bgcolor": "rgba(0,0,0,0)",
            "font": {"family": FONT, "color": c["text"], "size": 22},
            "margin": {"l": 12, "r": 24, "t": TOP_PX, "b": 12}, "showlegend": False,
            "xaxis": {**axis, **(xaxis or {})},
            "yaxis": {**axis, "rangemode": "tozero", **(yaxis or {})},
            "hoverlabel": {"font": {"size": 20}}, **extra}


def live_line(theme: str) -> go.Figure:
    """The empty per-minute line; present.js appends points to it (extendTraces) and
    slides its x range, so it is never redrawn from scratch while the room watches."""
    c = colors(theme)
    figure = go.Figure(go.Scatter(x=[], y=[], mode="lines+markers", name="hits / min",
                                  line={"width": 6, "color": c["accent"], "shape": "linear"},
                                  marker={"size": 10}, fill="tozeroy",
                                  fillcolor=c["fill"], hovertemplate="%{y:,} hits<extra></extra>"))
    # The minute still filling up: a hollow marker that rises, not a line plunging to it.
    figure.add_trace(go.Scatter(x=[], y=[], mode="markers", name="this minute so far",
                                marker={"size": 22, "color": "rgba(0,0,0,0)",
                                        "line": {"width": 5, "color": c["accent"]}},
                                hovertemplate="%{y:,} so far<extra></extra>"))
    figure.update_layout(_layout(theme, uirevision="present",
                                 xaxis={"type": "date", "tickformat": "%H:%M"},
                                 yaxis=COUNTS))    # present.js sets whole-number ticks
    return figure


def days_figure(frame: pd.DataFrame, theme: str) -> go.Figure:
    """Hits per day (``frame``: one column per page, summed), for the 30-day view."""
    c = colors(theme)
    total = frame.sum(axis=1) if len(frame.columns) else pd.Series(dtype="int64")
    axis = time_axis(pd.DatetimeIndex(total.index), "day")
    figure = go.Figure(go.Bar(x=axis.x, y=[int(v) for v in total.to_numpy()],
                              marker={"color": c["accent"]},
                              hovertemplate="%{x|%a %d %b}: %{y:,} hits<extra></extra>"))
    highest = max((int(v) for v in total.to_numpy()), default=0)
    figure.update_layout(_layout(theme, bargap=0.15, xaxis=axis.layout,
                                 yaxis={**COUNTS, **integer_ticks(highest)}))
    return figure


def bars_figure(top: pd.DataFrame, theme: str) -> go.Figure:
    """Top pages today as large horizontal bars, most visited on top."""
    c = colors(theme)
    ordered = top.iloc[::-1]
    figure = go.Figure(go.Bar(x=[int(v) for v in ordered["hits"]],
                              y=[escape(page) for page in ordered.index],
                              orientation="h", marker={"color": c["accent"]},
                              text=[count(v) for v in ordered["hits"]],
                              textposition="auto", textfont={"size": 26},
                              insidetextfont={"size": 26, "color": c["on_accent"]},
                              outsidetextfont={"size": 26, "color": c["text"]},
                              hovertemplate="%{y}: %{x:,} hits<extra></extra>"))
    highest = max((int(v) for v in ordered["hits"]), default=0)
    figure.update_layout(_layout(theme, bargap=0.25, yaxis={"tickfont": {"size": 26}},
                                 xaxis={**COUNTS, **integer_ticks(highest)}))
    return figure
