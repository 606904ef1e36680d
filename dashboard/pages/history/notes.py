"""History's notes and band: the chart decorated with the band and the notes of its
range (and of the previous period when compared), the list and CSV of the range's notes
under it, and the note form's callbacks wired to History's chart."""

from __future__ import annotations

import logging

import pandas as pd
import plotly.graph_objects as go
from dash import Input, Output, State, callback, dcc, html, no_update

from components import message
from components.annotations import add_annotations, add_band, notes_list
from dashboard.feedback import describe
from dashboard.notes_view import expected_band, notes_section, range_notes, register_note_callbacks
from dashboard.pages.history.compare import comparison_name
from dashboard.pages.history.view import compute_view, history_view
from dashboard.spreadsheet import frame_csv
from queries import validation
from queries.errors import HitboardError
from queries.reads.query import EVENTS

log = logging.getLogger(__name__)
BAND_GRANULARITIES = ("hour", "day")


def history_notes_section() -> html.Div:
    """The note form, then the notes of the range and their CSV."""
    return notes_section("history", html.Div(className="note-head", children=[
        html.H3("Notes in this range", className="card-subtitle"),
        html.Button("Notes CSV", id="history-notes-csv-button", n_clicks=0,
                    className="btn btn-small"),
        dcc.Download(id="history-notes-csv"),
    ]), html.Div(id="history-notes"))


def decorate_history(figure: go.Figure, view) -> go.Figure:
    """The band (hour and day charts showing one series or a stack) and the notes of the
    range and, with the comparison on, of the previous period."""
    shown, shell = view.period, view.shell
    index = view.current.index
    if not len(index):
        return figure
    try:
        one_series = len(view.current.columns) == 1 or view.controls.mode == "stacked"
        # The band is of hits, from the representation the chart is drawn from (none
        # for a combination of a page and a value, which only raw events hold).
        hits = view.controls.metric == "hits" and view.chart.source != EVENTS
        if shown.granularity in BAND_GRANULARITIES and one_series and hits:
            band = expected_band(view.site, shown.start, shown.end, shown.granularity,
                                 shell.pages, shell.tz, view.source, view.humans)  # as the chart
            if band is not None:
                add_band(figure, band.frame, band.weeks, index, shown.granularity,
                         view.current.sum(axis=1), shell.theme, view.incomplete)
        previous, shift = [], None
        if view.previous is not None and len(view.previous.index):
            previous = range_notes(view.site, view.before.start, view.before.end)
            shift = index[0] - view.previous.index[0]
        add_annotations(figure, range_notes(view.site, shown.start, shown.end), index,
                        shown.granularity, shell.theme, previous=previous,
                        previous_shift=shift, compared=comparison_name(view.query, shell.tz))
    except HitboardError:
        log.exception("notes or band left out of the history chart")
    return figure


def history_notes(search):
    """The notes of the range the URL shows, under the chart."""
    try:
        return notes_of(history_view(search))
    except Exception as exc:
        return message(describe(exc))


def notes_of(view):
    """The notes of a view's range, as listed under its chart."""
    if view.period is None:
        return None
    return notes_list(range_notes(view.site, view.period.start, view.period.end),
                      validation.timezone(view.shell.tz), "history-notes-list")


def notes_csv(_clicks, search):
    try:
        view = history_view(search)
    except Exception as exc:
        return no_update, message(describe(exc))
    if view.period is None:
        return no_update, message("There is no data to download yet.", "info")
    rows = range_notes(view.site, view.period.start, view.period.end)
    zone = validation.timezone(view.shell.tz)
    table = pd.DataFrame({
        "time": [pd.Timestamp(n["time"]).tz_convert(zone).isoformat() for n in rows],
        "site": [n["site"] for n in rows], "kind": [n["kind"] for n in rows],
        "author": [n["author"] for n in rows], "text": [n["text"] for n in rows],
        "id": [n["id"] for n in rows]})
    name = f"hitboard-{view.site}-notes-{view.period.start.astimezone(zone):%Y%m%d-%H%M}.csv"
    return dcc.send_string(frame_csv(table), name), None


def chart_index(site: str, search: str) -> tuple[pd.DatetimeIndex, str]:
    view = compute_view(search)
    return view.current.index, view.period.granularity


def register_history_note_callbacks() -> None:
    register_note_callbacks("history", chart_index, listing=history_notes)
    callback(Output("history-notes-csv", "data"),
             Output("history-alert", "children", allow_duplicate=True),
             Input("history-notes-csv-button", "n_clicks"), State("url", "search"),
             prevent_initial_call=True)(notes_csv)
