"""Historical: hits over a preset or custom range, per page, with the previous period.

The view is computed from the URL alone, once (``view.history_view``: the query value
every callback is handed), so a link, a reload and the back button all show the same
thing. Everything on the page moves in place: the controls write the URL (``url``, a
history entry, no re-render), and so do a click on a panel's value, the chip's ×, a
click on a day (its hours) or an hour (its minutes), and the back button between two
views of the page (``assets/inplace.js``); the page's callbacks then draw the new view
from it, and put the controls in step (``sync_controls``). Dash pages' router would
build the page again and run each of its callbacks twice.
"""

from functools import partial

import dash
from dash import Input, Output, State, callback, dcc, html, no_update

import queries
from components import (
    GRAPH_CONFIG,
    empty_state,
    message,
    notice_figure,
    plotted_frame,
    segmented,
    timeseries_figure,
    totals_table,
)
from components.numbers import count, decimal, duration, percent
from dashboard import reads
from dashboard.feedback import describe
from dashboard.pages.history.compare import (
    compare_controls,
    comparison_name,
    comparison_title,
    describe_comparison,
    register_compare_callbacks,
)
from dashboard.pages.history.controls import (  # noqa: F401 -- the page's own
    apply_controls,
    controls_in,
    register_control_callbacks,
    sync_controls,
)
from dashboard.pages.history.export import export_controls
from dashboard.pages.history.notes import (
    decorate_history,
    history_notes_section,
    notes_of,
    register_history_note_callbacks,
)
from dashboard.pages.history.panels import (
    PANEL_OUTPUTS,
    kpi_slot,
    panel_controls,
    panels_section,
    register_panel_callbacks,
    render_panels,
)
from dashboard.pages.history.url import (
    MODES,
    SYNCED_STORE,
    controls_of,
    site_span,
)
from dashboard.pages.history.view import compute_view, picker_dates
from dashboard.ranges import ALL_TIME, GRANULARITIES, PRESETS, Period
from dashboard.services import get_services
from dashboard.sitecheck import elsewhere_notice, unknown_site_notice
from dashboard.spreadsheet import frame_csv
from dashboard.state import (
    ShellState,
    encode,
    from_kwargs,
    parse_search,
    updated,
)
from queries import validation
from queries.reads.history import HITS, METRIC_LABELS, METRICS

PATH = "/history"
dash.register_page(__name__, path=PATH, name="History", title="hitboard · history", order=1)
register_history_note_callbacks()
register_compare_callbacks()
register_panel_callbacks()
register_control_callbacks()

# A metric's axis title, whether it is a count (else a rate or a mean: lines only, never
# stacked), and how the totals table writes it.
MEASURES = {HITS: ("hits", True, count), "visits": ("visits", True, count),
            "pageviews": ("pageviews", True, count),
            "bounce_rate": ("bounce rate (%)", False, partial(percent, digits=0)),
            "visit_duration": ("visit duration (s)", False, duration),
            "views_per_visit": ("views per visit", False, partial(decimal, digits=2))}
LABEL_FORMAT = {"minute": "%a %d %b %Y %H:%M", "hour": "%a %d %b %Y %H:%M",
                "day": "%a %d %b %Y"}


def layout(**query):
    """The page for the URL's query, drawn already: Dash pages' router sends it with its
    chart, totals, KPIs and panels, so a first visit waits for one answer, not for the
    page and then for its callbacks (they draw the moves made in place)."""
    page = _page(query)
    if query:                  # not Dash's check of every page's layout, at start
        search = encode(from_kwargs(query))
        _fill(page, RENDER_OUTPUTS, render(search))
        _fill(page, PANEL_OUTPUTS, render_panels(search))
    return page


def _fill(page, outputs: dict, values: dict) -> None:
    """Set each of ``outputs`` (a callback's) in ``page`` to what the callback gave."""
    found = {getattr(c, "id", None): c for c in page._traverse()}
    for name, output in outputs.items():
        if values.get(name, no_update) is not no_update:
            setattr(found[output.component_id], output.component_property, values[name])


def _page(query):
    q = from_kwargs(query)
    shell, controls = ShellState.from_query(q), controls_of(q)
    site = reads.resolve_site(shell.site) if controls.preset == ALL_TIME else None
    start_date, end_date = picker_dates(controls, shell.tz, site)
    return html.Div(className="page page-history",
                    **{"data-inplace": dash.get_relative_path(PATH)}, children=[
        html.Div(className="history-controls", children=[
            segmented("history-range", PRESETS, controls.preset),
            html.Div(className="date-range", children=dcc.DatePickerRange(
                id="history-dates", start_date=start_date, end_date=end_date,
                display_format="YYYY-MM-DD", minimum_nights=0, updatemode="bothdates",
                first_day_of_week=1)),
        ]),
        html.Div(className="history-controls", children=[
            segmented("history-granularity", GRANULARITIES, controls.granularity),
            segmented("history-mode", MODES, controls.mode),
            dcc.Checklist(id="history-compare", className="check",
                          options=[{"label": " Compare", "value": "1"}],
                          value=["1"] if controls.compare else []),
            compare_controls(**query),
            html.Label(className="hint metric-pick", children=["chart ", dcc.Dropdown(
                id="history-metric", clearable=False, searchable=False,
                value=controls.metric,
                options=[{"label": METRIC_LABELS[m], "value": m} for m in METRICS])]),
            html.Button("Download CSV", id="history-csv-button", n_clicks=0, className="btn"),
            dcc.Download(id="history-csv"),
            *export_controls(),
            dcc.Store(id="history-plotted"),
            dcc.Store(id="history-drill"),
            dcc.Store(id=SYNCED_STORE),
        ]),
        panel_controls(q),
        html.Div(id="history-alert"),
        kpi_slot(),
        html.Section(className="card", children=[
            html.Div(className="card-head", children=[
                html.H2(id="history-period", className="card-title"),
                html.Span(id="history-hint", className="hint"),
            ]),
            dcc.Loading(type="default", delay_show=300, parent_className="graph-box",
                        children=dcc.Graph(id="history-graph", config=GRAPH_CONFIG,
                                           style={"height": "100%"},
                                           figure=notice_figure("Loading…", shell.theme))),
            history_notes_section(),
        ]),
        html.Section(className="card", children=[
            html.H2("Totals", className="card-title"),
            html.Div(id="history-totals"),
        ]),
        panels_section(),
    ])


RENDER_OUTPUTS = {"figure": Output("history-graph", "figure"),
                  "totals": Output("history-totals", "children"),
                  "period": Output("history-period", "children"),
                  "hint": Output("history-hint", "children"),
                  "alert": Output("history-alert", "children"),
                  "plotted": Output("history-plotted", "data"),
                  "notes": Output("history-notes", "children"),
                  "versus": Output("history-compare-note", "children"),
                  "drill": Output("history-drill", "data")}


@callback(output=RENDER_OUTPUTS, inputs=[Input("url", "search")], prevent_initial_call=True)
def render(search):
    """The chart, its totals, the notes of its range, what it is compared with and,
    kept in the browser beside it, the CSV of exactly what it plots (a later download
    gives these numbers, however old the view is) and how a click on it drills down."""
    try:
        view = compute_view(search)
    except Exception as exc:
        theme = ShellState.from_query(parse_search(search)).theme
        return _notice(notice_figure("Nothing to show", theme), message(describe(exc)))
    theme = view.shell.theme
    if view.site is None:
        store = queries.redact(get_services().settings.store)
        return _notice(notice_figure("No data yet", theme), empty_state(store))
    if view.unknown_site:
        return _notice(notice_figure("No data for this site", theme),
                       unknown_site_notice(view.site, view.known_sites, PATH, search))
    shown = view.period
    metric = view.controls.metric
    measure, whole, number = MEASURES[metric]
    figure = timeseries_figure(
        view.current, granularity=shown.granularity, theme=theme, pages=view.shell.pages,
        mode=view.controls.mode if whole else "lines", previous=view.previous,
        incomplete=view.incomplete, uirevision=f"history|{search}", measure=measure,
        whole=whole, compared=comparison_name(view.query, view.shell.tz))
    figure = decorate_history(figure, view)
    totals = totals_table(view.current, view.previous, pages=view.shell.pages,
                          table_id="history-totals-table",
                          previous_title=comparison_title(view.query, view.shell.tz),
                          measure=METRIC_LABELS[metric], totals=view.chart.totals,
                          previous_totals=None if view.compared is None
                          else view.compared.totals, shown=number,
                          rate=metric == "bounce_rate")
    return {"figure": figure, "totals": totals, "period": period_label(shown, view.shell.tz),
            "hint": _hint(shown.granularity), "alert": _empty_range(view, search),
            "plotted": _plotted(view), "notes": notes_of(view),
            "versus": describe_comparison(search), "drill": drill_target(view)}


def _empty_range(view, search):
    """Where the site's hits are, when the range shows none of them."""
    if view.chart.total or (view.compared is not None and view.compared.total):
        return None
    span = site_span(view.site)
    if span is None or view.controls.preset == ALL_TIME:
        return None
    return elsewhere_notice(span, view.shell.tz, PATH, search)


def _notice(figure, alert) -> dict:
    """What :func:`render` shows instead of a chart: a notice, why, and nothing to
    download or drill into."""
    return {"figure": figure, "totals": None, "period": "", "hint": "", "alert": alert,
            "plotted": None, "notes": None, "versus": "", "drill": None}


def drill_target(view) -> dict | None:
    """What a click on the chart opens, for the browser to fill in (``drill`` in
    ``assets/history.js``): the URL of the view one granularity finer, with ``START``
    and ``END`` where the clicked bucket's bounds go; None when there is nothing finer
    (a minute, a filtered chart by the hour)."""
    finer = {"day": "hour", "hour": "minute"}.get(view.period.granularity)
    if finer is None:
        return None
    new = updated(view.query, range="custom", start=DRILL_START, end=DRILL_END, gran=finer)
    return {"granularity": view.period.granularity,
            "href": dash.get_relative_path(PATH) + encode(new)}


def _plotted(view) -> dict:
    table = plotted_frame(view.current, view.previous, view.controls.mode)
    zone = validation.timezone(view.shell.tz)
    name = f"hitboard-{view.site}-{view.period.granularity}-" \
           f"{view.period.start.astimezone(zone):%Y%m%d-%H%M}.csv"
    return {"filename": name, "content": frame_csv(table)}


def period_label(shown: Period, tz: str) -> str:
    zone = validation.timezone(tz)
    fmt = LABEL_FORMAT[shown.granularity]
    start, end = shown.start.astimezone(zone), shown.end.astimezone(zone)
    return f"{start:{fmt}} → {end:{fmt}} · per {shown.granularity} · {tz}"


def _hint(granularity: str) -> str:
    return {"day": "Click a day to see its hours.",
            "hour": "Click an hour to see its minutes."}.get(granularity, "")


@callback(
    Output("history-csv", "data"),
    Output("history-alert", "children", allow_duplicate=True),
    Input("history-csv-button", "n_clicks"),
    State("history-plotted", "data"),
    prevent_initial_call=True,
)
def download(_clicks, plotted):
    """The CSV of what the chart shows, as drawn (kept with the chart by ``render``)."""
    if not plotted:
        return no_update, message("There is no data to download yet.", "info")
    return dcc.send_string(plotted["content"], plotted["filename"]), None


DRILL_START, DRILL_END = "START", "END"
dash.clientside_callback(
    dash.ClientsideFunction("history", "drill"),
    Output("url", "search", allow_duplicate=True),
    Input("history-graph", "clickData"),
    State("history-drill", "data"),
    prevent_initial_call=True,
)
