"""Rollup views: a metric over buckets (bars), the bucket table, the consistency badge.

Inputs are plain DataFrames and values (``queries.rollup_reads`` shapes), never queries.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from dash import html

from .notice import notice_figure
from .theme import base_layout

METRICS = {"hits": "Hits", "bytes": "Bytes", "mean_bytes": "Mean bytes",
           "error_rate": "Error rate (4xx+5xx)"}
LEVELS = {"hour": "Hour", "day": "Day", "week": "Week", "month": "Month", "year": "Year"}
LABEL_FORMAT = {"hour": "%Y-%m-%d %H:00", "day": "%Y-%m-%d", "week": "%G-W%V (%d %b)",
                "month": "%Y-%m", "year": "%Y"}
COLUMNS = ("hits", "bytes", "mean_bytes", "error_rate", "2xx", "3xx", "4xx", "5xx", "other")


def bucket_label(level: str, time: pd.Timestamp) -> str:
    return time.strftime(LABEL_FORMAT[level])


def rollup_figure(table: pd.DataFrame, *, level: str, metric: str,
                  theme: str = "light") -> go.Figure:
    """One bar per bucket of ``table`` (index ``time``, a column per metric); an empty
    table gets a message instead of bare axes."""
    if table.empty:
        return notice_figure(f"No {LEVELS[level].lower()} rollups yet", theme)
    values = table[metric] if metric in table else pd.Series(dtype="float64")
    labels = [bucket_label(level, t) for t in table.index]
    hover = "%{x}<br>%{y:.2%}<extra></extra>" if metric == "error_rate" else \
        "%{x}<br>%{y:,.0f}<extra></extra>"
    figure = go.Figure(go.Bar(x=labels, y=values.to_numpy(), name=METRICS[metric],
                              hovertemplate=hover, marker={"color": "#4c6ef5"}))
    layout = base_layout(theme)
    layout["xaxis"] = {**layout.get("xaxis", {}), "type": "category"}
    layout["yaxis"] = {**layout.get("yaxis", {}), "title": {"text": METRICS[metric]},
                       "tickformat": ".0%" if metric == "error_rate" else ",.0f"}
    layout["showlegend"] = False
    figure.update_layout(**layout)
    return figure


def rollup_rows(table: pd.DataFrame, *, level: str) -> list[dict]:
    """One row per bucket, formatted for reading."""
    return [{"bucket": bucket_label(level, time), "hits": int(row["hits"]),
             "bytes": int(row["bytes"]), "mean_bytes": round(float(row["mean_bytes"]), 1),
             "error_rate": f"{row['error_rate']:.2%}",
             **{c: int(row[c]) for c in ("2xx", "3xx", "4xx", "5xx", "other")}}
            for time, row in table.iterrows()]


def rollup_table(table: pd.DataFrame, *, level: str, component_id: str) -> html.Div:
    """The buckets as a plain table (scrolling inside its card on narrow screens)."""
    head = ["Bucket (UTC)"] + [METRICS.get(c, c) for c in COLUMNS]
    body = [html.Tr([html.Td(row["bucket"])] + [
        html.Td(f"{row[c]:,}" if isinstance(row[c], int) else row[c], className="num")
        for c in COLUMNS]) for row in rollup_rows(table, level=level)]
    return html.Div(style={"overflowX": "auto"}, children=html.Table(
        id=component_id, className="totals",
        children=[html.Thead(html.Tr([html.Th(h) for h in head])), html.Tbody(body)]))


def consistency_badge(level: str, checked: int, differing: pd.DataFrame,
                      max_named: int = 5) -> html.Div:
    """Green when every ``*`` bucket's rollup hits equal the pre-aggregated hits; else
    red, naming the first differing buckets with both figures."""
    if checked == 0:
        return html.Div("No rollups to compare yet", className="badge badge-muted",
                        id="rollups-badge-state", **{"data-state": "empty"})
    if differing.empty:
        return html.Div(f"Consistent: {checked} {level} buckets equal the pre-aggregated hits",
                        className="badge badge-ok", id="rollups-badge-state",
                        **{"data-state": "ok"})
    named = [f"{bucket_label(level, t)}: rollup {int(r['rollup']):,} vs stats "
             f"{int(r['stats']):,}" for t, r in differing.head(max_named).iterrows()]
    more = len(differing) - len(named)
    return html.Div(className="badge badge-error", id="rollups-badge-state",
                    **{"data-state": "differ"}, children=[
        html.Strong(f"{len(differing)} of {checked} {level} buckets differ"),
        html.Ul([html.Li(text) for text in named] + ([html.Li(f"and {more} more")]
                                                      if more else [])),
    ])


def run_status(last_run: str, lag: str, waiting: int, error: str = "") -> html.Div:
    parts = [html.Span(f"Last run: {last_run}"), " · ", html.Span(f"Lag: {lag}"), " · ",
             html.Span(f"Events waiting: {waiting:,}")]
    if error:
        parts += [" · ", html.Span(f"Last error: {error}", className="notice-error")]
    return html.Div(parts, className="rollups-status")
