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
    COMPARE_WITH,
    compare_controls,
    comparison_title,
    describe_comparison,
    register_compare_callbacks,
)
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
    Controls,
    controls_of,
    opening_preset,
    site_span,
)
from dashboard.pages.history.view import compute_view, history_view, picker_dates
from dashboard.ranges import ALL_TIME, GRANULARITIES, PRESETS, Period
from dashboard.services import get_services
from dashboard.sitecheck import elsewhere_notice, unknown_site_notice
from dashboard.spreadsheet import frame_csv
from dashboard.state import (
    ASSETS_KEY,
    BOTS_KEY,
    ShellState,
    changed_search,
    choice,
    encode,
    first,
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
                          options=[{"label": " Compare with previous period", "value": "1"}],
                          value=["1"] if controls.compare else []),
            compare_controls(**query),
            html.Label(className="hint metric-pick", children=["chart ", dcc.Dropdown(
                id="history-metric", clearable=False, searchable=False,
                value=controls.metric,
                options=[{"label": METRIC_LABELS[m], "value": m} for m in METRICS])]),
            html.Button("Download CSV", id="history-csv-button", n_clicks=0, className="btn"),
            dcc.Download(id="history-csv"),
            dcc.Store(id="history-plotted"),
            dcc.Store(id="history-drill"),
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
    changes = dict(bounds)
    if new_preset != url.preset or bounds:      # else the URL keeps its range as written
        changes["range"] = None if new_preset == opening else new_preset
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


# The controls :func:`sync_controls` puts in step with the URL, and how each is read.
SYNCED = {"preset": ("history-range", "value"), "start_date": ("history-dates", "start_date"),
          "end_date": ("history-dates", "end_date"),
          "granularity": ("history-granularity", "value"), "mode": ("history-mode", "value"),
          "compare": ("history-compare", "value"), "metric": ("history-metric", "value"),
          "versus": ("history-compare-with", "value"),
          "versus_start": ("history-compare-start", "value"),
          "bots": ("history-bots", "value"), "assets": ("history-assets", "value")}


@callback(output={name: Output(*target, allow_duplicate=True)
                  for name, target in SYNCED.items()},
          inputs={"search": Input("url", "search"),
                  "shown": {name: State(*target) for name, target in SYNCED.items()}},
          prevent_initial_call=True)
def sync_controls(search, shown):
    """The controls as the URL says (the back button, a link moved in place): each one
    that shows something else; ``no_update`` for the rest, so nothing fires for them."""
    try:
        wanted = controls_in(search)
    except Exception:           # a URL the page's alert explains: the controls stay
        return dict.fromkeys(SYNCED, no_update)
    return {name: no_update if _same(name, shown.get(name), value) else value
            for name, value in wanted.items()}


def controls_in(search) -> dict:
    """Each synced control's value for the URL, keyed as :data:`SYNCED`."""
    view = history_view(search)
    query, controls = view.query, view.controls
    start, end = picker_dates(controls, view.shell.tz, view.site)
    return {"preset": controls.preset, "start_date": start, "end_date": end,
            "granularity": controls.granularity, "mode": controls.mode,
            "compare": ["1"] if controls.compare else [], "metric": controls.metric,
            "versus": choice(query, "vs", COMPARE_WITH, "previous"),
            "versus_start": first(query, "vsstart") or "",
            "bots": ["1"] if first(query, BOTS_KEY) == "1" else [],
            "assets": ["1"] if first(query, ASSETS_KEY) == "1" else []}


def _same(name: str, shown, wanted) -> bool:
    if name in ("start_date", "end_date"):
        return _day(shown) == _day(wanted)
    if isinstance(wanted, list):
        return sorted(shown or []) == wanted
    return (shown or None) == (wanted or None)


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
        whole=whole)
    figure = decorate_history(figure, view)
    totals = totals_table(view.current, view.previous, pages=view.shell.pages,
                          table_id="history-totals-table",
                          previous_title=comparison_title(view.query),
                          measure=METRIC_LABELS[metric], totals=view.chart.totals,
                          previous_totals=None if view.compared is None
                          else view.compared.totals, shown=number)
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
