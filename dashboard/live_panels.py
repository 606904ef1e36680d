"""The Live page's people: visitors active now (last 5 minutes) and this minute, from raw
events (exact, and kept far longer than these windows), and the top referrers of the
last hour from the counters; each referrer links to History filtered by it. Kept beside
the page so the page includes it with two lines (the section, the registration)."""

from __future__ import annotations

import datetime as dt

import dash
from dash import Input, Output, callback, html

import queries
from components import Kpi, kpi_cards, message
from components.breakdowns import breakdown_panel
from dashboard import reads
from dashboard.feedback import describe
from dashboard.state import FILTER_KEY, ShellState, encode, parse_search, shell_search, updated
from queries.dimensions.reads import active_visitors, breakdown

ACTIVE_MINUTES = 5
TOP_N = 8


def live_people_section() -> html.Div:
    return html.Div(className="grid", children=[
        html.Div(id="live-people", className="kpis kpis-2", children=kpi_cards(_cards(None, None))),
        html.Div(id="live-referrers"),
    ])


def register_people_callbacks() -> None:
    """Declare the callback; the Live page calls this as Dash loads it."""
    callback(
        Output("live-people", "children"),
        Output("live-referrers", "children"),
        Input("live-interval", "n_intervals"),
        Input("url", "search"),
    )(refresh_people)


def _cards(active, minute) -> list[Kpi]:
    return [Kpi("live-kpi-active", "Active visitors", active, f"last {ACTIVE_MINUTES} minutes"),
            Kpi("live-kpi-visitors-minute", "Visitors this minute", minute, "last 60 seconds")]


def refresh_people(_n, search):
    query = parse_search(search)
    shell = ShellState.from_query(query)
    seconds = reads.live_seconds()
    try:
        site = reads.resolve_site(shell.site, fresh=True)
        if site is None or site not in reads.shared(queries.list_sites, seconds=seconds):
            return kpi_cards(_cards(None, None)), None
        now = reads.now(seconds)
        active = reads.shared(active_visitors, site, now, ACTIVE_MINUTES, seconds=seconds)
        minute = reads.shared(active_visitors, site, now, 1, seconds=seconds)
        top = reads.shared(breakdown, site, "referrer", now - dt.timedelta(hours=1), now,
                           n=TOP_N, seconds=seconds)
    except Exception as exc:
        return kpi_cards(_cards(None, None)), message(describe(exc))
    base = parse_search(shell_search(query))

    def href(value: str) -> str:
        return dash.get_relative_path("/history") + encode(
            updated(base, range="today", **{FILTER_KEY: f"referrer:{value}"}))

    panel = breakdown_panel("referrer", "Referrers, last hour", top, href,
                            panel_id="live-referrers-panel")
    return kpi_cards(_cards(active, minute)), panel
