"""The live page's recent-hits card: its layout and its refresh, kept beside the page so
the page includes it with two lines (the section, and the callback's registration)."""

from __future__ import annotations

from collections.abc import Mapping

from dash import Input, Output, State, callback, html, no_update

from components import message, segmented
from components.recent import recent_table
from dashboard import reads
from dashboard.feedback import describe
from dashboard.pages.live.pacer import PACER
from dashboard.state import ShellState, changed_search, choice, parse_search, updated
from queries.reads.live import newest_hits

SIZES = {"20": "20", "100": "100", "1000": "1,000"}
DEFAULT_SIZE = "20"
SIZE_KEY = "recent"


def recent_section(query: Mapping[str, list[str]]) -> html.Section:
    """The card, showing as many rows as the URL's ``recent`` asks."""
    return html.Section(className="card card-wide", children=[
        html.Div(className="toolbar", children=[
            html.H2("Recent hits", className="card-title"),
            segmented("live-recent-n", SIZES, choice(query, SIZE_KEY, SIZES, DEFAULT_SIZE)),
        ]),
        html.Div(id="live-recent", children=recent_table([])),
    ])


def choose_size(size, search):
    """The rows chosen → URL, so a reload or a page re-rendered keeps them."""
    new = updated(parse_search(search), **{SIZE_KEY: None if size == DEFAULT_SIZE else size})
    return changed_search(new, search) or no_update


def register_recent_callbacks() -> None:
    """Declare the feed's callback. The live page calls this as Dash loads it, so every app
    built gets the callback (Dash collects callbacks in a global list at app creation)."""
    callback(
        Output("live-recent", "children"),
        PACER.tick,
        Input("live-recent-n", "value"),
        Input("url", "search"),
        running=PACER.running("recent"),
    )(refresh_recent)
    callback(
        Output("url", "search", allow_duplicate=True),
        Input("live-recent-n", "value"),
        State("url", "search"),
        prevent_initial_call=True,
    )(choose_size)


def refresh_recent(_n, size, search):
    shell = ShellState.from_query(parse_search(search))
    n = int(size if size in SIZES else DEFAULT_SIZE)
    try:
        site = reads.resolve_site(shell.site, fresh=True)
        hits = [] if site is None else reads.shared(
            newest_hits, site, shell.pages, n, seconds=reads.live_seconds())
        return recent_table(hits, shell.tz, table_id="live-recent-table")
    except Exception as exc:
        return message(describe(exc))
