"""Historical: hits over a preset or custom range, per page, with the previous period.

Controls write the URL (``url``, no re-render); the view is computed from the URL alone,
so a link, a reload and the back button all show the same thing. Clicking a day opens its
hours and an hour its minutes through ``navigate``, which re-renders the page for the new
range, so the back button returns to the wider view.
"""

import datetime as dt
from functools import partial

import dash
from dash import Input, Output, State, callback, ctx, dcc, html, no_update

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
    register_compare_callbacks,
)
from dashboard.pages.history.notes import (
    decorate_history,
    history_notes_section,
    register_history_note_callbacks,
)
from dashboard.pages.history.panels import (
    kpi_slot,
    panel_controls,
    panels_section,
    register_panel_callbacks,
)
from dashboard.pages.history.url import (
    MODES,
    Controls,
    controls_of,
    opening_preset,
    shown_period,
    site_span,
)
from dashboard.pages.history.view import compute_view, picker_dates
from dashboard.ranges import ALL_TIME, GRANULARITIES, PRESETS, Period, drill_down
from dashboard.services import get_services
from dashboard.sitecheck import elsewhere_notice, unknown_site_notice
from dashboard.spreadsheet import frame_csv
from dashboard.state import (
    ShellState,
    changed_search,
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
    q = from_kwargs(query)
    shell, controls = ShellState.from_query(q), controls_of(q)
    site = reads.resolve_site(shell.site) if controls.preset == ALL_TIME else None
    start_date, end_date = picker_dates(controls, shell.tz, site)
    return html.Div(className="page page-history", children=[
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
            dcc.Store(id="history-plotted"),
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


@callback(
    output={"search": Output("url", "search", allow_duplicate=True),
            "start_date": Output("history-dates", "start_date"),
            "end_date": Output("history-dates", "end_date"),
            "preset": Output("history-range", "value")},
    inputs=[Input("history-range", "value"),
    Input("history-dates", "start_date"),
    Input("history-dates", "end_date"),
    Input("history-granularity", "value"),
    Input("history-mode", "value"),
    Input("history-compare", "value"),
    Input("history-metric", "value"),
    State("url", "search")],
    prevent_initial_call=True,
)
def choose(preset, start_date, end_date, granularity, mode, compare, metric, search):
    """Controls → URL. Picking dates makes a custom range; a preset shows its dates."""
    triggered = {item["prop_id"].split(".")[0] for item in ctx.triggered
                 if item["prop_id"] != "."}
    return apply_controls(triggered, preset, start_date, end_date, granularity, mode,
                          compare, search, metric)


def apply_controls(triggered, preset, start_date, end_date, granularity, mode, compare,
                   search, metric=None):
    """The URL for what the user changed, and the preset and dates to show.

    Only a control that fired *and* differs from the URL changes it: a control reporting
    its value as it mounts (Dash's date picker and radio items do) leaves the range alone,
    so a sub-day range (an hour's minutes) survives every other change. Returns
    ``{search, start_date, end_date, preset}`` with ``no_update`` where nothing changes."""
    triggered = {triggered} if isinstance(triggered, str) else set(triggered)
    query = parse_search(search)
    shell = ShellState.from_query(query)
    tz, site = shell.tz, reads.resolve_site(shell.site)
    url, opening = controls_of(query), opening_preset(query)
    shown = picker_dates(url, tz, site)
    picked = (_day(start_date), _day(end_date))
    dates, bounds, new_preset = (no_update, no_update), {}, url.preset
    if "history-dates" in triggered and all(picked) and picked != shown:
        new_preset, bounds = "custom", _whole_days(*picked)
    elif "history-range" in triggered and preset in PRESETS and preset != url.preset:
        new_preset = preset
        if preset == "custom":
            if not all(picked):
                return {"search": no_update, "start_date": no_update, "end_date": no_update,
                        "preset": url.preset}
            bounds = _whole_days(*picked)
        else:
            bounds = {"start": None, "end": None}
            dates = picker_dates(Controls(preset, "auto", "lines", False, None, None), tz,
                                 site)
    changes = {"range": None if new_preset == opening else new_preset, **bounds}
    if "history-granularity" in triggered and granularity in GRANULARITIES:
        changes["gran"] = None if granularity == "auto" else granularity
    if "history-mode" in triggered and mode in MODES:
        changes["mode"] = None if mode == "lines" else mode
    if "history-compare" in triggered:
        changes["compare"] = "1" if compare else None
    if "history-metric" in triggered and metric in METRICS:
        changes["metric"] = None if metric == HITS else metric
    new_search = changed_search(updated(query, **changes), search)
    return {"search": new_search or no_update, "start_date": dates[0], "end_date": dates[1],
            "preset": new_preset if new_preset != preset else no_update}


def _day(value) -> str | None:
    """The date part of what the picker reports (it may add a time)."""
    return str(value)[:10] if value else None


def _whole_days(first: str, last: str) -> dict:
    """The URL bounds of the picked local days, ``last`` included."""
    try:
        end = (dt.date.fromisoformat(last) + dt.timedelta(days=1)).isoformat()
        return {"start": dt.date.fromisoformat(first).isoformat(), "end": end}
    except (ValueError, OverflowError):
        # Only a crafted request sends these: the URL keeps them and the page says why.
        return {"start": first, "end": last}


@callback(
    output={"figure": Output("history-graph", "figure"),
            "totals": Output("history-totals", "children"),
            "period": Output("history-period", "children"),
            "hint": Output("history-hint", "children"),
            "alert": Output("history-alert", "children"),
            "plotted": Output("history-plotted", "data")},
    inputs=[Input("url", "search")],
)
def render(search):
    """The chart, its totals and, kept in the browser beside it, the CSV of exactly
    what it plots: a later download gives these numbers, however old the view is."""
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
            "plotted": _plotted(view)}


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
    download."""
    return {"figure": figure, "totals": None, "period": "", "hint": "", "alert": alert,
            "plotted": None}


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


@callback(
    Output("navigate", "href", allow_duplicate=True),
    Input("history-graph", "clickData"),
    State("url", "search"),
    prevent_initial_call=True,
)
def drill(click, search):
    """A click on a day or an hour opens it, one granularity finer."""
    points = (click or {}).get("points") or []
    if not points:
        return no_update
    query = parse_search(search)
    try:
        granularity = shown_period(query).granularity
    except queries.HitboardError:
        return no_update
    point = points[0]
    when = point.get("customdata")
    when = when[0] if isinstance(when, list) and when else when  # [when, label] on DST days
    target = drill_down(granularity, when) or drill_down(granularity, point.get("x"))
    if target is None:
        return no_update
    start, end, granularity = target
    new = updated(query, range="custom", start=start, end=end, gran=granularity)
    return dash.get_relative_path(PATH) + encode(new)
