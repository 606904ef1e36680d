"""Rollup views: a metric over buckets (bars), the bucket table, the consistency badge.

Inputs are plain DataFrames and values (``queries.rollups.reads`` shapes), never queries.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from dash import html

from .notice import notice_figure
from .numbers import count, decimal
from .plotly_text import escape
from .theme import base_layout

METRICS = {"hits": "Hits", "bytes": "Bytes", "mean_bytes": "Mean bytes",
           "error_rate": "Error rate (4xx+5xx)"}
LEVELS = {"hour": "Hour", "day": "Day", "week": "Week", "month": "Month", "year": "Year"}
LABEL_FORMAT = {"hour": "%Y-%m-%d %H:00", "day": "%Y-%m-%d", "week": "%G-W%V (%d %b)",
                "month": "%Y-%m", "year": "%Y"}
COLUMNS = ("hits", "bytes", "mean_bytes", "error_rate", "2xx", "3xx", "4xx", "5xx", "other")


def bucket_label(level: str, time: pd.Timestamp) -> str:
    return time.strftime(LABEL_FORMAT[level])


PAGE_COLOURS = ("#4c6ef5", "#f59f00", "#12b886", "#e64980", "#7950f2", "#fd7e14", "#15aabf",
                "#82c91e", "#fa5252", "#868e96")


def rollup_figure(table: pd.DataFrame, *, level: str, metric: str,
                  theme: str = "light") -> go.Figure:
    """One bar per bucket of ``table`` (index ``time``, a column per metric; with a
    ``page`` column, one bar series per page, grouped); an empty table gets a message
    instead of bare axes."""
    if table.empty:
        return notice_figure(f"No {LEVELS[level].lower()} rollups yet", theme)
    hover = "%{x}<br>%{y:.2%}<extra>%{fullData.name}</extra>" if metric == "error_rate" else \
        "%{x}<br>%{y:,.0f}<extra>%{fullData.name}</extra>"
    groups = table.groupby("page", sort=False) if "page" in table else [("*", table)]
    figure = go.Figure([
        go.Bar(x=[bucket_label(level, t) for t in part.index],
               y=(part[metric] if metric in part else pd.Series(dtype="float64")).to_numpy(),
               name="whole site" if page == "*" else escape(page), hovertemplate=hover,
               marker={"color": PAGE_COLOURS[i % len(PAGE_COLOURS)]})
        for i, (page, part) in enumerate(groups)])
    layout = base_layout(theme)
    layout["xaxis"] = {**layout.get("xaxis", {}), "type": "category"}
    layout["yaxis"] = {**layout.get("yaxis", {}), "title": {"text": METRICS[metric]},
                       "tickformat": ".0%" if metric == "error_rate" else ",.0f"}
    layout["showlegend"] = len(figure.data) > 1
    layout["barmode"] = "group"
    figure.update_layout(**layout)
    return figure


def rollup_rows(table: pd.DataFrame, *, level: str) -> list[dict]:
    """One row per bucket (and page, when the table has a ``page`` column)."""
    return [{"bucket": bucket_label(level, time),
             **({"page": row["page"]} if "page" in table else {}),
             "hits": int(row["hits"]),
             "bytes": int(row["bytes"]), "mean_bytes": round(float(row["mean_bytes"]), 1),
             "error_rate": f"{row['error_rate']:.2%}",
             **{c: int(row[c]) for c in ("2xx", "3xx", "4xx", "5xx", "other")}}
            for time, row in table.iterrows()]


def rollup_table(table: pd.DataFrame, *, level: str, component_id: str) -> html.Div:
    """The buckets as a plain table; on a phone, one card per bucket."""
    by_page = "page" in table
    head = ["Bucket (UTC)"] + (["Page"] if by_page else []) + [METRICS.get(c, c)
                                                               for c in COLUMNS]
    body = [html.Tr([html.Td(row["bucket"], **{"data-label": head[0]})]
                    + ([html.Td(row["page"], className="page-cell", **{"data-label": "Page"})]
                       if by_page else []) + [
        html.Td(_cell(row[c]), className="num", **{"data-label": METRICS.get(c, c)})
        for c in COLUMNS]) for row in rollup_rows(table, level=level)]
    # On a phone each bucket becomes a card naming its columns (assets/ops.css).
    return html.Div(style={"overflowX": "auto"}, children=html.Table(
        id=component_id, className="totals stack-on-phone stack-grid",
        children=[html.Thead(html.Tr([html.Th(h) for h in head])), html.Tbody(body)]))


def _cell(value) -> str:
    """Counts with thousands separators; means with one decimal each (13,472.0 beside
    13,599.3, not 13472 beside 13599.3)."""
    if isinstance(value, int):
        return count(value)
    return decimal(value) if isinstance(value, float) else value


def consistency_badge(level: str, checked: int, differing: pd.DataFrame,
                      max_named: int = 5, *, first=None, last=None, until=None,
                      in_progress: int = 0) -> html.Div:
    """Green when every compared bucket's rollup hits equal the statistics' hours summed
    the same way; else red, naming the first differing buckets with both figures. Says
    which buckets it compared and which it left out (in progress)."""
    unit = f"{level} bucket" + ("s" if checked != 1 else "")
    if checked == 0:
        if not in_progress:
            text = "No rollups to compare yet"
        elif until is None:
            text = "Nothing compared yet: the rollups have not run (next run soon, or Run now)"
        else:
            text = (f"Nothing compared yet: the {count(in_progress)} {level} bucket(s) shown are "
                    "still in progress")
        return html.Div(text, className="badge badge-muted", id="rollups-badge-state",
                        **{"data-state": "empty"})
    scope = _scope(level, first, last, until, in_progress)
    if differing.empty:
        return html.Div(className="badge badge-ok", id="rollups-badge-state",
                        **{"data-state": "ok"}, children=[
            html.Strong(f"Consistent: {count(checked)} {unit} "
                        f"equal{'s' if checked == 1 else ''} the pre-aggregated hits"),
            html.Span(f" {scope}" if scope else "")])
    named = [f"{bucket_label(level, t)}{_page(r)}: rollup {count(r['rollup'])} vs stats "
             f"{count(r['stats'])}" for t, r in differing.head(max_named).iterrows()]
    more = len(differing) - len(named)
    return html.Div(className="badge badge-error", id="rollups-badge-state",
                    **{"data-state": "differ"}, children=[
        html.Strong(f"{count(len(differing))} of {count(checked)} {level} buckets differ"),
        html.Span(f" {scope}" if scope else ""),
        html.Ul([html.Li(text) for text in named] + ([html.Li(f"and {count(more)} more")]
                                                      if more else [])),
    ])


def _page(row) -> str:
    page = row.get("page", "*") if hasattr(row, "get") else "*"
    return "" if page in ("*", None) else f" · {page}"


def _scope(level: str, first, last, until, in_progress: int) -> str:
    """Which buckets were compared, in words."""
    if first is None:
        return ""
    span = bucket_label(level, pd.Timestamp(first))
    if last is not None and last != first:
        span += f" to {bucket_label(level, pd.Timestamp(last))}"
    text = f"({span}, UTC; statistics summed from their hours"
    if until is not None:
        text += f"; rollups complete before {pd.Timestamp(until):%Y-%m-%d %H:%M} UTC"
    if in_progress:
        text += f"; {count(in_progress)} bucket{'s' if in_progress != 1 else ''} in progress " \
                "not compared"
    return text + ")"


def invariants_badge(breaches, checked_what: str, max_named: int = 5) -> html.Div:
    """The pre-aggregated documents' own counters: ``breaches`` (collection, id, problem)
    named, or a green line saying what was checked."""
    if not breaches:
        return html.Div(f"Pre-aggregated documents agree with themselves ({checked_what}: "
                        "daily = Σ hourly = Σ minutes; monthly daily.D = the day's daily)",
                        className="badge badge-ok", id="rollups-invariants",
                        **{"data-state": "ok"})
    named = [html.Li([html.Code(f"{b.collection} {b.id}"), f": {b.problem}"])
             for b in breaches[:max_named]]
    if len(breaches) > max_named:
        named.append(html.Li(f"and {count(len(breaches) - max_named)} more"))
    return html.Div(className="badge badge-error", id="rollups-invariants",
                    **{"data-state": "differ"}, children=[
        html.Strong(f"{count(len(breaches))} pre-aggregated document"
                    + (" disagrees with itself" if len(breaches) == 1 else
                       "s disagree with themselves") + f" ({checked_what})"), html.Ul(named)])


def run_status(last_run: str, lag: str, waiting: int, error: str = "") -> html.Div:
    parts = [html.Span(f"Last run: {last_run}"), " · ", html.Span(f"Lag: {lag}"), " · ",
             html.Span(f"Events waiting: {count(waiting)}")]
    if error:
        parts += [" · ", html.Span(f"Last error: {error}", className="notice-error")]
    return html.Div(parts, className="rollups-status")
