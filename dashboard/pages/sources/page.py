"""Sources: a site's access logs beside its beacon, per page and day.

The range is in the URL (``days=1|7|30``, with the shell's site, pages and zone), so a reload,
a shared link and the back button show the same view. One callback keeps the URL in step
with the control, one draws the view from the URL."""

import dash
from dash import Input, Output, State, callback, html, no_update

from components import message, segmented
from components.sources import source_cards, source_table
from dashboard import reads
from dashboard.feedback import describe
from dashboard.pages.sources import view
from dashboard.services import get_services
from dashboard.state import ShellState, changed_search, from_kwargs, parse_search, updated
from queries.reads.sources import compare

dash.register_page(__name__, path=view.PATH, name="Sources", title="hitboard · sources",
                   order=7)
ROWS = 100


def layout(**query_kwargs):
    days = view.days_of(from_kwargs(query_kwargs))
    return html.Div(className="page page-sources", children=[
        html.Div(className="history-controls", children=[
            segmented("sources-days", view.DAYS, days)]),
        html.P(id="sources-summary", className="hint"),
        html.Div(id="sources-alert"),
        html.Div(id="sources-kpis", className="kpis kpis-sources"),
        html.Section(className="card", children=[
            html.H2("Per page and day", className="card-title"),
            html.P(f"The {ROWS} page-days the sources saw most, by their pageviews.",
                   className="hint"),
            html.Div(id="sources-rows")]),
    ])


@callback(Output("url", "search", allow_duplicate=True), Input("sources-days", "value"),
          State("url", "search"), prevent_initial_call=True)
def choose_days(days, search):
    """The control → the URL (no entry when the URL already says the same)."""
    query = parse_search(search)
    new = updated(query, **{view.DAYS_KEY: None if days == view.DEFAULT_DAYS else days})
    return changed_search(new, search) or no_update


@callback(Output("sources-summary", "children"), Output("sources-alert", "children"),
          Output("sources-kpis", "children"), Output("sources-rows", "children"),
          Output("sources-days", "value"), Input("url", "search"), Input("url", "pathname"))
def render(search, pathname):
    """The comparison of the URL's site, zone and days."""
    if pathname != dash.get_relative_path(view.PATH):
        return (no_update,) * 5
    query = parse_search(search)
    shell = ShellState.from_query(query)
    days = view.days_of(query)
    try:
        site = reads.resolve_site(shell.site)
        if site is None:
            return None, message("No site yet.", "info"), None, None, days
        seconds = reads.history_seconds()
        start, end = view.span(days, shell.tz, reads.now(seconds))
        found = reads.shared(compare, site, start, end, shell.tz, ROWS, shell.pages,
                             seconds=seconds)
    except Exception as exc:
        return None, message(describe(exc)), None, None, days
    retention = get_services().settings.events_ttl_days
    empty = view.empty_words(found)
    return (view.summary(site, found, retention, shell.pages),
            message(empty, "info") if empty else None,
            source_cards(found.totals, found.share),
            source_table(found.rows) if len(found.rows) else None, days)
