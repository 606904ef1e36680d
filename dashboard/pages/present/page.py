"""Presenter mode: the live traffic for a room, full screen, no selectors or toolbars.

Big KPIs, the last minutes' line that grows in place (present.js appends points, so the
chart never flickers or jumps), a ticker of the newest requests and today's top pages as
Live ranks them, re-ranking; ``cycle``/``views`` rotate views like Grafana's playlists.
Every read goes through ``reads.shared``: a room full of screens costs one read a second.
"""

from __future__ import annotations

import datetime as dt

import dash
import pandas as pd
from dash import (
    ClientsideFunction,
    Input,
    Output,
    State,
    callback,
    clientside_callback,
    ctx,
    dcc,
    html,
    no_update,
)

from components import presenter as ui
from components.numbers import count
from components.presenter_notes import note_layout
from dashboard import reads
from dashboard.authority import requires
from dashboard.feedback import describe
from dashboard.loadgen.control import get_generator
from dashboard.pacing import Pacer
from dashboard.pages.present.view import VIEWS, WINDOWS, PresentView
from dashboard.state import ShellState, from_kwargs, parse_search
from queries import validation
from queries.annotations import annotations_between
from queries.reads import presenter as present
from queries.reads.presenter import MAX_SCANNED, RECENT_MINUTES, minute_counts, ticker

dash.register_page(__name__, path="/present", name="Present", title="hitboard · present",
                   order=90)

TICK_MS = 500
KPI_MS = 1000
KPI_SECONDS = 5
# Visitors "now": distinct among the last minute's raw events. Five minutes (Plausible's
# window) meant grouping 300,000 events every 5 s at 1,000 hits/s, which held the line back.
ACTIVE_MINUTES = present.PRESENT_ACTIVE_MINUTES
SLOW_MS = 30_000
# The line and the cards tick only once their callbacks have answered (dashboard.pacing).
LINE_PACER = Pacer("present-tick", ("line",))
KPI_PACER = Pacer("present-kpi-tick", ("kpis", "feed"))
TICKER_ROWS = 8
MINUTE = dt.timedelta(minutes=1)


def layout(**query):
    q = from_kwargs(query)
    view = PresentView.from_query(q)
    return html.Div(id="present-root", className=f"present theme-{view.theme}", children=[
        html.Header(className="present-head", children=[
            html.Span(id="present-site", className="present-site"),
            html.Span(id="present-view-name", className="present-view-name",
                      children=VIEWS[view.views[0]]),
            # What s/g did: in the header's flow, where it covers nothing.
            html.Div(id="present-toast", className="present-toast", role="status"),
            html.Span("LIVE", id="present-state", className="present-state"),
            html.Span("Press ? for keys", className="present-hint"),
        ]),
        html.Section(id="present-view-live", className="present-view", children=[
            html.Div(id="present-kpis", className="present-kpis",
                     children=_kpis(None, view.visits)),
            html.Div(className="present-main", children=[
                html.Div(className="present-chart", children=[
                    html.H2(id="present-chart-title", className="present-title",
                            children=f"Hits per minute · last {view.window} min"),
                    dcc.Graph(id="present-graph", config=ui.CONFIG, className="present-graph",
                              figure=ui.live_line(view.theme)),
                ]),
                html.Div(className="present-side", children=[
                    html.H2("Top pages today", className="present-title"),
                    html.Ol(id="present-top", className="present-top"),
                    html.H2("Newest requests", className="present-title"),
                    html.Ul(id="present-ticker", className="present-ticker"),
                ]),
            ]),
        ]),
        html.Section(id="present-view-history-30d", className="present-view", hidden=True,
                     children=[html.H2("Hits per day · last 30 days", className="present-title"),
                               dcc.Graph(id="present-history", config=ui.CONFIG,
                                         className="present-graph present-graph-full")]),
        html.Section(id="present-view-top", className="present-view", hidden=True,
                     children=[html.H2("Top pages today", className="present-title"),
                               dcc.Graph(id="present-bars", config=ui.CONFIG,
                                         className="present-graph present-graph-full")]),
        html.Div(hidden=True, children=[  # driven by the keyboard (present.js)
            html.Button(id=name, n_clicks=0) for name in (
                "present-pause", "present-theme", "present-window-prev",
                "present-window-next", "present-spike", "present-generator")]),
        dcc.Store(id="present-config", data={"views": list(view.views), "cycle": view.cycle,
                                             "windows": list(WINDOWS), "theme": view.theme}),
        dcc.Store(id="present-window", data=view.window),
        dcc.Store(id="present-theme-now", data=view.theme),
        dcc.Store(id="present-data"),
        dcc.Store(id="present-frames"),
        dcc.Store(id="present-plot-px"),   # the line's plot width, for its notes' labels
        dcc.Interval(id="present-tick", interval=TICK_MS),
        dcc.Interval(id="present-kpi-tick", interval=KPI_MS),
        *LINE_PACER.stores(),
        *KPI_PACER.stores(),
        dcc.Interval(id="present-slow", interval=SLOW_MS),
        dcc.Interval(id="present-cycle", interval=(view.cycle or 3600) * 1000,
                     disabled=view.cycle is None),
    ])


def _kpis(numbers: dict | None, visits: bool = False) -> list:
    numbers = numbers or {}
    change = numbers.get("change")
    # Coloured only when it means something: a room reads red as trouble.
    tone = "" if change is None or abs(change) < 1 else ("up" if change > 0 else "down")
    return [
        ui.kpi("present-kpi-minute", "Hits this minute", ui.big_number(numbers.get("minute")),
               "since the minute began"),
        ui.kpi("present-kpi-visits", "Visits", ui.big_number(numbers.get("visits")),
               f"begun in the last {RECENT_MINUTES} minutes") if visits else
        ui.kpi("present-kpi-active", "Visitors now", ui.big_number(numbers.get("active")),
               "distinct in the last minute" if numbers.get("complete", True)
               else f"at least: from the newest {count(MAX_SCANNED)} hits"),
        ui.kpi("present-kpi-change", "Today vs yesterday", ui.change_text(change),
               numbers.get("compare", "at the same time of day"), tone),
    ]


def _site_and_zone(search):
    shell = ShellState.from_query(parse_search(search))
    validation.timezone(shell.tz)
    return reads.resolve_site(shell.site, fresh=True), shell.tz


@callback(
    Output("present-data", "data"),
    LINE_PACER.tick,
    Input("present-window", "data"),
    State("url", "search"),
    State("present-plot-px", "data"),
    running=LINE_PACER.running("line"),
)
def refresh_line(_n, window, search, plot_px=None):
    """The line's points as of the current live bucket: one read of the site's minutes,
    kept apart from the KPIs so a slower read never holds the line back; its notes laid
    out for the plot's width (``plot_px``, as the browser last measured it)."""
    window = int(window or 15)
    try:
        site, tz = _site_and_zone(search)
        if site is None:
            return None
        seconds = reads.live_seconds()
        now = reads.now(seconds)
        points = reads.shared(minute_counts, site, now, window, seconds=seconds)
        start, end = now - window * MINUTE, now + MINUTE   # the x range present.js shows
        notes = reads.shared(annotations_between, site, start, end, seconds=seconds)
    except Exception as exc:
        describe(exc)       # logged; the screen keeps its last line
        return no_update
    zone = validation.timezone(tz)
    return {"x": [t.astimezone(zone).strftime("%Y-%m-%d %H:%M:%S") for t, _ in points],
            "y": [v for _, v in points], "window": window,
            "now": now.astimezone(zone).strftime("%Y-%m-%d %H:%M:%S"),
            "notes": note_layout(notes, zone, start, end, plot_px)}


@callback(
    Output("present-kpis", "children"),
    Output("present-site", "children"),
    KPI_PACER.tick,
    State("url", "search"),
    running=KPI_PACER.running("kpis"),
)
def refresh_kpis(_n, search):
    """Hits this minute (every second); visitors now and today against yesterday, which
    read more, every ``KPI_SECONDS``."""
    try:
        visits = PresentView.from_query(parse_search(search)).visits
        site, tz = _site_and_zone(search)
        if site is None:
            return _kpis(None, visits), "No data yet"
        seconds = reads.live_seconds()
        minute = reads.shared(minute_counts, site, reads.now(seconds), 1, seconds=seconds)
        found = reads.shared(present.kpis, site, reads.now(KPI_SECONDS), tz, visits=visits,
                             seconds=KPI_SECONDS)
    except Exception as exc:
        return no_update, describe(exc)
    active, days = found.active, found.days
    numbers = {"minute": minute[-1][1], "active": active.visitors, "visits": found.visits,
               "complete": active.complete, "change": days.change,
               "compare": f"{count(days.today)} vs {count(days.yesterday)} at this time"}
    return _kpis(numbers, visits), site


@callback(
    Output("present-ticker", "children"),
    Output("present-top", "children"),
    KPI_PACER.tick,
    State("url", "search"),
    running=KPI_PACER.running("feed"),
)
def refresh_feed(_n, search):
    """The ticker's newest requests and today's top pages, as Live shows them."""
    try:
        site, tz = _site_and_zone(search)
        if site is None:
            return ui.ticker_items([], "UTC"), ui.top_items(_empty_top())
        seconds = reads.live_seconds()
        rows = reads.shared(ticker, site, TICKER_ROWS, seconds=seconds)
        top = reads.shared(present.top_today, site, reads.now(seconds), tz, seconds=seconds)
    except Exception as exc:
        return [html.Li(describe(exc), key="error")], no_update
    return ui.ticker_items(rows, tz), ui.top_items(top)


def _empty_top() -> pd.DataFrame:
    return pd.DataFrame({"hits": []}, index=pd.Index([], name="page"))


@callback(
    Output("present-history", "figure"),
    Output("present-bars", "figure"),
    Input("present-slow", "n_intervals"),
    Input("present-theme-now", "data"),
    State("url", "search"),
)
def refresh_views(_n, theme, search):
    """The playlist's other views: 30 days by day, and today's top pages (people's
    page views, as Live ranks them)."""
    try:
        site, tz = _site_and_zone(search)
        if site is None:
            return no_update, no_update
        seconds = reads.history_seconds()
        now = reads.now(seconds)
        days = reads.shared(present.last_30_days, site, now, tz, seconds=seconds)
        top = reads.shared(present.top_today, site, now, tz, seconds=seconds)
    except Exception as exc:
        describe(exc)       # logged; the screen keeps its last views
        return no_update, no_update
    return ui.days_figure(days, theme).to_dict(), ui.bars_figure(top, theme).to_dict()


@callback(
    Output("present-toast", "children"),
    Input("present-spike", "n_clicks"),
    Input("present-generator", "n_clicks"),
    prevent_initial_call=True,
)
@requires("loadgen", refused=lambda reason: reason)
def drive_generator(_spike, _toggle):
    """``s`` fires the load generator's spike, ``g`` starts or stops it (signed in)."""
    try:
        generator = get_generator()
        if ctx.triggered_id == "present-spike":
            generator.spike()
            return "Spike: ×10 for 30 s"
        if generator.status().running:
            generator.stop()
            return "Load generator stopped"
        generator.start()
        return "Load generator started"
    except Exception as exc:
        return describe(exc)


clientside_callback(
    ClientsideFunction("present", "chart"),
    Output("present-frames", "data"),
    Output("present-plot-px", "data"),
    Input("present-data", "data"),
    Input("present-theme-now", "data"),
)

clientside_callback(
    ClientsideFunction("present", "pause"),
    Output("present-tick", "disabled"),
    Output("present-kpi-tick", "disabled"),
    Output("present-state", "children"),
    Input("present-pause", "n_clicks"),
)

clientside_callback(
    ClientsideFunction("present", "theme"),
    Output("present-theme-now", "data"),
    Output("present-root", "className"),
    Input("present-theme", "n_clicks"),
    State("present-config", "data"),
)

clientside_callback(
    ClientsideFunction("present", "window"),
    Output("present-window", "data"),
    Output("present-chart-title", "children"),
    Input("present-window-prev", "n_clicks"),
    Input("present-window-next", "n_clicks"),
    State("present-window", "data"),
    State("present-config", "data"),
    prevent_initial_call=True,
)

clientside_callback(
    ClientsideFunction("present", "playlist"),
    Output("present-view-live", "hidden"),
    Output("present-view-history-30d", "hidden"),
    Output("present-view-top", "hidden"),
    Output("present-view-name", "children"),
    Input("present-cycle", "n_intervals"),
    State("present-config", "data"),
)


LINE_PACER.register()
KPI_PACER.register()
