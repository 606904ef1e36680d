"""Live: hits per minute over the last 15, 60 or 180 minutes, refreshed every 2 seconds.

The figure keeps one ``uirevision`` per view, so a refresh redraws the data without
resetting the viewer's zoom; every viewer of a process shares one read per cache bucket.
"""

from __future__ import annotations

import datetime as dt
import time

import dash
from dash import Input, Output, State, callback, clientside_callback, dcc, html, no_update

import queries
from components import (
    GRAPH_CONFIG,
    Kpi,
    empty_state,
    kpi_cards,
    message,
    notice_figure,
    segmented,
    timeseries_figure,
    top_pages_table,
)
from dashboard import reads
from dashboard.feedback import describe
from dashboard.notes_view import notes_section
from dashboard.pages.live.feed import recent_section, register_recent_callbacks
from dashboard.pages.live.notes import banner_slot, decorate_live, register_live_note_callbacks
from dashboard.pages.live.pacer import PACER
from dashboard.pages.live.panels import live_people_section, register_people_callbacks
from dashboard.services import get_services
from dashboard.sitecheck import unknown_site_notice
from dashboard.state import (
    BOTS_KEY,
    ShellState,
    changed_search,
    choice,
    first,
    from_kwargs,
    parse_search,
    updated,
)
from queries import validation

dash.register_page(__name__, path="/", name="Live", title="hitboard · live", order=0)
register_recent_callbacks()
register_live_note_callbacks()
register_people_callbacks()
PACER.register()

WINDOWS = {"15": "15 min", "60": "1 hour", "180": "3 hours"}
DEFAULT_WINDOW = "60"
VIEW_SECONDS = 10
REFRESH_MS = 2000


def layout(**query):
    q = from_kwargs(query)
    theme = ShellState.from_query(q).theme
    return html.Div(className="page page-live", children=[
        html.Div(className="toolbar", children=[
            segmented("live-window", WINDOWS, choice(q, "window", WINDOWS, DEFAULT_WINDOW)),
            html.Button("Pause", id="live-pause", n_clicks=0, className="btn"),
            html.Span(id="live-freshness", className="freshness", **{"aria-live": "polite"}),
        ]),
        html.Div(id="live-alert"),
        banner_slot(),
        html.Div(id="live-kpis", className="kpis", children=kpi_cards(_kpis(None, None, "UTC"))),
        html.Div(className="grid", children=[
            html.Section(className="card card-wide", children=[
                html.H2("Hits per minute", className="card-title"),
                html.Div(className="graph-box keep-zoom", children=dcc.Graph(
                    id="live-graph", config={**GRAPH_CONFIG, "doubleClick": "autosize"},
                    style={"height": "100%"},
                    figure=notice_figure("Loading…", theme))),
                notes_section("live"),
            ]),
            html.Section(className="card", id="live-top-card", children=[
                html.H2("Top pages today", className="card-title"),
                html.Div(id="live-top", children=html.P("Loading…", className="muted")),
            ]),
        ]),
        live_people_section(),
        recent_section(q),
        dcc.Interval(id="live-interval", interval=REFRESH_MS),
        *PACER.stores(),
        dcc.Interval(id="live-clock", interval=1000),
        dcc.Store(id="live-updated"),
    ])


def _kpis(totals, now: dt.datetime | None, tz: str) -> list[Kpi]:
    local = now.astimezone(validation.timezone(tz)) if now else None
    every = "every hit, bots included"     # the counters' population, as the chart's
    return [
        Kpi("live-kpi-minute", "Hits this minute", totals and totals.this_minute,
            f"since {local:%H:%M}, so far; {every}" if local else every),
        Kpi("live-kpi-hour", "Hits, last hour", totals and totals.last_hour,
            f"last 60 minutes; {every}"),
        Kpi("live-kpi-today", "Hits today", totals and totals.today,
            f"since midnight, {tz}; {every}"),
    ]


@callback(
    Output("url", "search", allow_duplicate=True),
    Input("live-window", "value"),
    State("url", "search"),
    prevent_initial_call=True,
)
def choose_window(window, search):
    new = updated(parse_search(search), window=None if window == DEFAULT_WINDOW else window)
    return changed_search(new, search) or no_update


@callback(
    output={"figure": Output("live-graph", "figure"), "kpis": Output("live-kpis", "children"),
            "top": Output("live-top", "children"), "updated": Output("live-updated", "data"),
            "alert": Output("live-alert", "children")},
    inputs=[PACER.tick, Input("url", "search")],
    running=PACER.running("chart"),
)
def refresh(_n, search):
    """Everything the page shows, as of the current cache bucket."""
    query = parse_search(search)
    shell = ShellState.from_query(query)
    window = int(choice(query, "window", WINDOWS, DEFAULT_WINDOW))
    try:
        site = reads.resolve_site(shell.site, fresh=True)
        if site is None:
            store = queries.redact(get_services().settings.store)
            return _notice(notice_figure("No data yet", shell.theme), shell.tz,
                           empty_state(store))
        validation.timezone(shell.tz)  # a bad zone is the first thing to say
        known = reads.shared(queries.list_sites, seconds=reads.live_seconds())
        if site not in known:
            return _notice(notice_figure("No data for this site", shell.theme), shell.tz,
                           unknown_site_notice(site, known, "/", search))
        bots = first(query, BOTS_KEY) == "1"
        snapshot = reads.live_snapshot(site, shell.pages, shell.tz, window, humans=not bots)
    except Exception as exc:
        blank = notice_figure("Could not load", shell.theme)
        return {"figure": blank, "kpis": no_update, "top": None, "updated": no_update,
                "alert": message(describe(exc))}
    key = ("live-view", site, shell.pages, shell.tz, window, shell.theme, bots,
           snapshot.as_of)
    figure, cards, bars = get_services().cache.get_or_compute(
        key, lambda: _view(snapshot, site, shell, window, bots), timeout=VIEW_SECONDS)
    figure = decorate_live(figure, snapshot, site, shell, window)
    age = time.time() - snapshot.as_of.timestamp()
    return {"figure": figure, "kpis": cards, "top": bars,
            "updated": {"age": age, "as_of": snapshot.as_of.isoformat()}, "alert": None}


def _notice(blank, tz: str, alert) -> dict:
    """No chart to draw: ``blank`` for the figure, no top pages, empty cards and why."""
    return {"figure": blank, "kpis": kpi_cards(_kpis(None, None, tz)), "top": None,
            "updated": None, "alert": alert}


def _view(snapshot, site: str, shell, window: int, bots: bool) -> tuple:
    """The page's figure, cards and top pages for one snapshot, built once and shared by
    every viewer of the same view (building Plotly figures is most of a refresh's cost)."""
    pages = shell.pages
    revision = f"live|{site}|{'|'.join(pages)}|{shell.tz}|{window}"
    # The last minute is the running one (begun at ``as_of``'s minute, even at :00).
    figure = timeseries_figure(snapshot.series, granularity="minute", theme=shell.theme,
                               pages=pages, uirevision=revision, incomplete=True,
                               running=True)
    return (figure.to_dict(), kpi_cards(_kpis(snapshot.totals, snapshot.as_of, shell.tz)),
            [top_pages_table(snapshot.top, pages=pages),
             html.P(_top_basis(snapshot.top, bots), className="hint")])


def _top_basis(top, bots: bool) -> str:
    """What the top pages count: people's page views (bots too with ``bots=1``, as the
    panels below), unless the counters had to rank every hit."""
    if top.attrs.get("note"):
        return top.attrs["note"]
    if top.attrs.get("every_hit"):
        return ("Every hit, bots included (counted before bots were told apart); static "
                "files left out.")
    if bots:
        return "Page views, bots included; static files (styles, scripts, images) left out."
    return "People's page views: bots and static files (styles, scripts, images) left out."


clientside_callback(
    """function(clicks) {
        const paused = clicks % 2 === 1;
        return [paused, paused ? "Resume" : "Pause"];
    }""",
    Output("live-interval", "disabled"),
    Output("live-pause", "children"),
    Input("live-pause", "n_clicks"),
)

clientside_callback(
    dash.ClientsideFunction("hitboard", "freshness"),
    Output("live-freshness", "children"),
    Input("live-clock", "n_intervals"),
    Input("live-updated", "data"),
    State("live-interval", "disabled"),
)
