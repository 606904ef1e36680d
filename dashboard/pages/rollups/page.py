"""Rollups: the events rolled up by hour, day, week, month or year, one metric charted,
every metric tabled, for the whole site or the selected pages; when the last run
happened, how far behind it is, "run now", whether the rollups agree with the
pre-aggregated hits and whether those agree with themselves. Buckets are UTC: the page
says so when the viewer's zone is another."""

import datetime as dt
import time

import dash
import pandas as pd
from dash import Input, Output, callback, ctx, dcc, html

from components import GRAPH_CONFIG, message, segmented
from components.numbers import count
from components.rollups import (
    LEVELS,
    METRICS,
    consistency_badge,
    invariants_badge,
    rollup_figure,
    rollup_table,
    run_status,
)
from dashboard import reads
from dashboard.authority import refusal, requires
from dashboard.feedback import describe
from dashboard.rollup_job import rollup_job
from dashboard.services import get_services
from dashboard.state import ShellState, parse_search
from queries.rollups import checks as rollup_checks
from queries.rollups import reads as rollup_reads
from queries.rollups.reads import UTC_NAMES

dash.register_page(__name__, path="/rollups", name="Rollups", title="hitboard · rollups",
                   order=5)
SHOWN_BUCKETS = {"hour": 24 * 14, "day": 366, "week": 260, "month": 120, "year": 50}


def layout(**_query):
    refused = refusal("rollups")
    return html.Div(className="page page-rollups", children=[
        html.Div(className="history-controls", children=[
            segmented("rollups-level", LEVELS, "day"),
            segmented("rollups-metric", METRICS, "hits"),
            html.Button("Run now", id="rollups-run", n_clicks=0, className="btn",
                        disabled=refused is not None,
                        title=refused.reason if refused else "Run the rollups now"),
            html.Span(refused.reason, className="hint", id="rollups-signin")
            if refused else None,
        ]),
        html.Div(id="rollups-alert"),
        html.Div(id="rollups-status"),
        html.Div(id="rollups-zone"),
        html.Div(id="rollups-badge"),
        html.Section(className="card", children=[
            dcc.Loading(type="default", delay_show=300,
                        children=dcc.Graph(id="rollups-graph", className="graph",
                                           config=GRAPH_CONFIG)),
        ]),
        html.Section(className="card", children=[html.Div(id="rollups-table")]),
        dcc.Interval(id="rollups-tick", interval=30_000),
        dcc.Store(id="rollups-ran"),   # what "run now" said: the page shows it as it renders
    ])


def _ago(when: dt.datetime | None, now: dt.datetime) -> str:
    if when is None:
        return "never"
    return f"{when:%Y-%m-%d %H:%M:%S} UTC ({count(round((now - when).total_seconds()))} s ago)"


@callback(
    Output("rollups-ran", "data"),
    Input("rollups-run", "n_clicks"),
    prevent_initial_call=True,
)
@requires("rollups", refused=lambda reason: {"run": time.time(), "kind": "warning",
                                             "error": reason})
def run_now(clicks):
    """The "Run now" button: one run of the server's rollup job. Returns what the page
    should say (``error`` and its ``kind``, None when the run went well) for
    :func:`render` to show."""
    job = rollup_job()
    if job is None:
        return {"run": clicks, "kind": "warning",
                "error": "This server is read-only: run `hitboard rollup` instead."}
    try:
        job.run_now()
    except Exception as exc:  # shown to the viewer, logged by describe
        return {"run": clicks, "kind": "error", "error": describe(exc)}
    return {"run": clicks, "kind": None, "error": None}


@callback(
    output={"figure": Output("rollups-graph", "figure"),
            "table": Output("rollups-table", "children"),
            "status": Output("rollups-status", "children"),
            "badge": Output("rollups-badge", "children"),
            "alert": Output("rollups-alert", "children"),
            "zone": Output("rollups-zone", "children")},
    inputs=[Input("url", "search"), Input("rollups-level", "value"),
            Input("rollups-metric", "value"), Input("rollups-ran", "data"),
            Input("rollups-tick", "n_intervals")],
)
def render(search, level, metric, ran, _tick):
    """The page as the store holds it now; after "run now", with what the run said."""
    shell = ShellState.from_query(parse_search(search))
    level = level if level in LEVELS else "day"          # only a crafted request sends
    metric = metric if metric in METRICS else "hits"     # anything else
    alert = None
    if ctx.triggered_id == "rollups-ran" and ran and ran.get("error"):
        alert = message(ran["error"], ran["kind"])
    job = rollup_job()
    db = get_services().db
    now = dt.datetime.now(dt.UTC)
    status = rollup_reads.rollup_status(db, now)
    lag = "-" if status.lag_s is None else f"{count(round(status.lag_s))} s"
    status_view = run_status(_ago(status.last_run, now), lag, status.events_waiting,
                             job.last_error if job else "")
    zone = _zone_note(shell.tz)
    site = reads.resolve_site(shell.site)
    empty = rollup_figure(_no_rows(), level=level, metric=metric, theme=shell.theme)
    shown = {"figure": empty, "table": None, "status": status_view, "badge": None,
             "alert": alert, "zone": zone}
    if site is None:
        return shown
    pages = list(shell.pages) or None
    try:
        span = rollup_reads.rollup_span(db, site, level)
        if span is None:
            return {**shown, "badge": consistency_badge(level, 0, _no_diff()),
                    "table": message(f"No {level} rollups for {site} yet: ingest logs or "
                                     "send beacon hits, then run the rollups.", "info")}
        first, last = span
        end = rollup_reads.next_start(rollup_reads.level_of(level), last)
        start = max(first, _back(level, end))
        table = _pages_table(db, site, level, start, end, pages)
        check = rollup_checks.consistency(db, site, level, start, end, pages)
        # The documents' own counters do not depend on the rollups: shared by every
        # viewer for the historical cache period, not re-read at each 30 s tick.
        breaches = reads.shared(rollup_checks.invariants, site, start, end,
                                tuple(pages) if pages else None,
                                seconds=reads.history_seconds())
    except Exception as exc:  # a bad URL or a failing store: a message, not a traceback
        return {**shown, "alert": message(describe(exc))}
    figure = rollup_figure(table, level=level, metric=metric, theme=shell.theme)
    what = f"{site}, {'the selected pages' if pages else 'whole site'}, the range shown"
    badges = html.Div(className="rollups-badges", children=[
        consistency_badge(level, check.checked, check.differing, first=check.first,
                          last=check.last, until=check.covered_until,
                          in_progress=check.in_progress),
        invariants_badge(breaches, what)])
    return {**shown, "figure": figure, "badge": badges,
            "table": rollup_table(table, level=level, component_id="rollups-datatable")}


def _pages_table(db, site, level, start, end, pages) -> pd.DataFrame:
    """The whole site's buckets, or each selected page's with a ``page`` column."""
    if not pages:
        return rollup_reads.rollup_table(db, site, level, start, end)
    parts = [rollup_reads.rollup_table(db, site, level, start, end, page).assign(page=page)
             for page in pages]
    return pd.concat(parts).sort_index(kind="stable")


def _zone_note(tz: str):
    """Rollup buckets are UTC hours, days, weeks, months and years, not converted."""
    if tz in UTC_NAMES:
        return None
    return message(f"Rollup buckets are UTC (days start at 00:00 UTC, weeks on Monday), "
                   f"not converted to {tz}. History shows {tz} days from the "
                   "pre-aggregated statistics.", "info")


def _back(level: str, end: dt.datetime) -> dt.datetime:
    start = end
    for _ in range(SHOWN_BUCKETS[level]):
        start = rollup_reads.floor(rollup_reads.level_of(level), start - dt.timedelta(seconds=1))
    return start


def _no_rows():
    return pd.DataFrame(columns=list(METRICS), index=pd.DatetimeIndex([], tz="UTC"))


def _no_diff():
    return pd.DataFrame({"rollup": [], "stats": []})
