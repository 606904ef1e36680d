"""Sources: a site's access logs beside its beacon, per page and day.

The range is in the URL as History writes it (``range=`` a preset, or ``custom`` with
``start`` and ``end``; the shell's site, pages and zone beside it), so a reload, a shared
link and the back button show the same view, and a site whose logs are from 2019 opens
on them. One callback keeps the URL in step with the controls, one draws the view from
the URL."""

import dash
from dash import Input, Output, State, callback, ctx, dcc, html, no_update
from pymongo.errors import PyMongoError

import queries
from components import message, segmented
from components.sources import source_cards, source_table
from dashboard import reads
from dashboard.feedback import describe
from dashboard.pages.sources import view
from dashboard.ranges import PRESETS
from dashboard.services import get_services
from dashboard.state import ShellState, changed_search, from_kwargs, parse_search, updated
from queries.reads.sources import compare

dash.register_page(__name__, path=view.PATH, name="Sources", title="hitboard · sources",
                   order=7)
ROWS = 100


def layout(**query_kwargs):
    query = from_kwargs(query_kwargs)
    shown = _range(query)
    return html.Div(className="page page-sources", children=[
        html.Div(className="history-controls", children=[
            segmented("sources-range", PRESETS, shown.preset),
            html.Div(className="date-range", children=dcc.DatePickerRange(
                id="sources-dates", display_format="YYYY-MM-DD", minimum_nights=0,
                updatemode="bothdates", first_day_of_week=1)),
        ]),
        html.P(id="sources-summary", className="hint"),
        html.Div(id="sources-alert"),
        html.Div(id="sources-kpis", className="kpis kpis-sources"),
        html.Section(className="card", children=[
            html.H2("Per page and day", className="card-title"),
            html.P(f"The {ROWS} page-days the sources saw most, by their pageviews.",
                   className="hint"),
            html.Div(id="sources-rows")]),
    ])


def _span(site):
    """The site's first and last day of hits (None: none, or no site)."""
    if not site:
        return None
    return reads.shared(queries.site_span, site, seconds=reads.history_seconds())


def _range(query) -> view.Range:
    """The URL's range, the site's opening one without ``range=``."""
    shell = ShellState.from_query(query)
    try:
        site = reads.resolve_site(shell.site)
        now = reads.now(reads.history_seconds())
        return view.Range.from_query(query, view.opening(_span(site), now, shell.tz))
    except (queries.HitboardError, PyMongoError):   # a bad site or zone, a store down:
        return view.Range.from_query(query, "7d")   # the page's alert says why


def _dates(query, shown: view.Range) -> tuple[str, str] | None:
    """The local dates the picker shows for the URL's range (None: a range the page
    cannot read)."""
    tz = ShellState.from_query(query).tz
    try:
        site = reads.resolve_site(ShellState.from_query(query).site)
        bounds = view.bounds(shown, tz, reads.now(reads.history_seconds()), _span(site))
        return view.picker_dates(*bounds, tz)
    except (queries.HitboardError, PyMongoError):
        return None


@callback(Output("url", "search", allow_duplicate=True), Input("sources-range", "value"),
          Input("sources-dates", "start_date"), Input("sources-dates", "end_date"),
          State("url", "search"), prevent_initial_call=True)
def choose_range(preset, start_date, end_date, search):
    """The controls → the URL."""
    triggered = {item["prop_id"].split(".")[0] for item in ctx.triggered}
    return apply_range(triggered, preset, start_date, end_date, search)


def apply_range(triggered, preset, start_date, end_date, search):
    """The URL for the control that fired (``triggered``: ids): a preset, or the dates
    picked (a custom range). A control reporting its value as it mounts, or the dates
    the view itself shows, change nothing (no entry when the URL already says the same)."""
    query = parse_search(search)
    shown = _range(query)
    if "sources-dates" in triggered:
        bounds = view.picked(start_date, end_date)
        if bounds is None or _dates(query, shown) == (start_date[:10], end_date[:10]):
            return no_update              # the dates the range shows (render set them)
        changes = {"range": "custom", **bounds}
    elif preset in PRESETS and preset != shown.preset and preset != "custom":
        opening = _range(updated(query, range=None, days=None)).preset
        changes = {"range": None if preset == opening else preset, "start": None,
                   "end": None}
    else:
        return no_update                  # "Custom": the dates pick it
    new = updated(query, **changes, **{view.DAYS_KEY: None})
    return changed_search(new, search) or no_update


@callback(Output("sources-summary", "children"), Output("sources-alert", "children"),
          Output("sources-kpis", "children"), Output("sources-rows", "children"),
          Output("sources-range", "value"), Output("sources-dates", "start_date"),
          Output("sources-dates", "end_date"),
          Input("url", "search"), Input("url", "pathname"))
def render(search, pathname):
    """The comparison of the URL's site, zone and range."""
    if pathname != dash.get_relative_path(view.PATH):
        return (no_update,) * 7
    query = parse_search(search)
    shell = ShellState.from_query(query)
    shown = _range(query)
    dates = (no_update, no_update)
    try:
        site = reads.resolve_site(shell.site)
        if site is None:
            return None, message("No site yet.", "info"), None, None, shown.preset, *dates
        seconds = reads.history_seconds()
        start, end = view.bounds(shown, shell.tz, reads.now(seconds), _span(site))
        dates = view.picker_dates(start, end, shell.tz)
        found = reads.shared(compare, site, start, end, shell.tz, ROWS, shell.pages,
                             seconds=seconds)
    except Exception as exc:
        return None, message(describe(exc)), None, None, shown.preset, *dates
    retention = get_services().settings.events_ttl_days
    empty = view.empty_words(found)
    return (view.summary(site, found, retention, shell.pages),
            message(empty, "info") if empty else None,
            source_cards(found.totals, found.share),
            source_table(found.rows) if len(found.rows) else None, shown.preset, *dates)
