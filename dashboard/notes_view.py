"""Annotations and the expected range on the History and Live pages, kept beside the
pages so each includes them with a few one-line calls: ``notes_section`` in the layout,
``register_note_callbacks`` as the page loads, ``decorate_history``/``decorate_live``
on the figure its own callback built, and on Live ``banner_slot`` + the banner callback.

Notes are read fresh (a one-second cache): one made here shows at once. The band is
read through the history cache (``cache_seconds``): it changes with past weeks only.
"""

from __future__ import annotations

import datetime as dt
import logging

import pandas as pd
import plotly.graph_objects as go
from dash import Input, Output, Patch, State, callback, dcc, html, no_update

from components import message
from components.annotations import (
    NOTES_AXIS,
    add_annotations,
    add_band,
    excursion_banner,
    inside,
    note_form,
    note_trace,
    notes_list,
)
from dashboard import reads
from dashboard.authority import refusal, requires
from dashboard.compare_view import comparison_period
from dashboard.feedback import describe
from dashboard.history_view import compute_view
from dashboard.services import get_services
from dashboard.spreadsheet import frame_csv
from dashboard.state import ShellState, parse_search
from queries import annotations as notes
from queries import validation
from queries.errors import HitboardError
from queries.reads import expected

log = logging.getLogger(__name__)
BAND_GRANULARITIES = ("hour", "day")


# -- layout -------------------------------------------------------------------------------
def notes_section(prefix: str) -> html.Div:
    """The "Add note" form; on History also the notes of the range and their CSV."""
    refused = refusal("notes")
    children = [note_form(prefix, refused.reason if refused else None)]
    if prefix == "history":
        children += [
            html.Div(className="note-head", children=[
                html.H3("Notes in this range", className="card-subtitle"),
                html.Button("Notes CSV", id="history-notes-csv-button", n_clicks=0,
                            className="btn btn-small"),
                dcc.Download(id="history-notes-csv"),
            ]),
            html.Div(id="history-notes"),
        ]
    return html.Div(className="notes", children=children)


def banner_slot() -> html.Div:
    return html.Div(id="live-banner", **{"aria-live": "polite"})


# -- reads --------------------------------------------------------------------------------
def _notes(site: str, start: dt.datetime, end: dt.datetime) -> list[dict]:
    return reads.shared(notes.annotations_between, site, start, end,
                        seconds=reads.live_seconds())


def _band(site, start, end, granularity, pages, tz, source=None, humans=False):
    return reads.shared(expected.expected_range, site, start, end, granularity, pages, tz,
                        source=source, humans=humans, seconds=reads.history_seconds())


# -- History ------------------------------------------------------------------------------
def decorate_history(figure: go.Figure, view, search: str | None) -> go.Figure:
    """The band (hour and day charts showing one series or a stack) and the notes of the
    range and, with the comparison on, of the previous period."""
    shown, shell = view.period, view.shell
    index = view.current.index
    if not len(index):
        return figure
    try:
        one_series = len(view.current.columns) == 1 or view.controls.mode == "stacked"
        if shown.granularity in BAND_GRANULARITIES and one_series:
            band = _band(view.site, shown.start, shown.end, shown.granularity,
                         shell.pages, shell.tz, view.source, view.humans)  # as the chart
            if band is not None:
                add_band(figure, band.frame, band.weeks, index, shown.granularity,
                         view.current.sum(axis=1), shell.theme, view.incomplete)
        previous, shift = [], None
        if view.previous is not None and len(view.previous.index):
            before = comparison_period(parse_search(search), shown, shell.tz)
            previous = _notes(view.site, before.start, before.end)
            shift = index[0] - view.previous.index[0]
        add_annotations(figure, _notes(view.site, shown.start, shown.end), index,
                        shown.granularity, shell.theme, previous=previous,
                        previous_shift=shift)
    except HitboardError:
        log.exception("notes or band left out of the history chart")
    return figure


def history_notes(search):
    """The notes of the range the URL shows, under the chart."""
    try:
        view = compute_view(search)
        if view.period is None:
            return None
        return notes_list(_notes(view.site, view.period.start, view.period.end),
                          validation.timezone(view.shell.tz), "history-notes-list")
    except Exception as exc:
        return message(describe(exc))


def notes_csv(_clicks, search):
    try:
        view = compute_view(search)
    except Exception as exc:
        return no_update, message(describe(exc))
    if view.period is None:
        return no_update, message("There is no data to download yet.", "info")
    rows = _notes(view.site, view.period.start, view.period.end)
    zone = validation.timezone(view.shell.tz)
    table = pd.DataFrame({
        "time": [pd.Timestamp(n["time"]).tz_convert(zone).isoformat() for n in rows],
        "site": [n["site"] for n in rows], "kind": [n["kind"] for n in rows],
        "author": [n["author"] for n in rows], "text": [n["text"] for n in rows],
        "id": [n["id"] for n in rows]})
    name = f"hitboard-{view.site}-notes-{view.period.start.astimezone(zone):%Y%m%d-%H%M}.csv"
    return dcc.send_string(frame_csv(table), name), None


# -- Live ---------------------------------------------------------------------------------
def decorate_live(figure: dict, snapshot, site: str, shell, window: int) -> dict:
    """The live figure with the notes of its window and, for one series, the band by
    minute of day; built once per snapshot, notes and band for every viewer."""
    series = snapshot.series
    index = series.index
    if not len(index):
        return figure
    start, end = index[0].to_pydatetime(), index[-1].to_pydatetime() + dt.timedelta(minutes=1)
    try:
        shown = _notes(site, start, end)
        band = None
        if len(series.columns) == 1:
            hour = end.replace(minute=0, second=0, microsecond=0)
            band = _band(site, hour - dt.timedelta(minutes=window + 60),
                         hour + dt.timedelta(hours=1), "minute", shell.pages, shell.tz)
    except HitboardError:
        log.exception("notes or band left out of the live chart")
        return figure
    if not shown and band is None:
        return figure
    key = ("live-decorated", site, shell.pages, shell.tz, window, shell.theme,
           snapshot.as_of, tuple(n["id"] for n in shown), band is not None)

    def build() -> dict:
        decorated = go.Figure(figure)
        if band is not None:
            add_band(decorated, band.frame, band.weeks, index, "minute",
                     series.sum(axis=1), shell.theme, incomplete=True)
        add_annotations(decorated, shown, index, "minute", shell.theme)
        return decorated.to_dict()

    return get_services().cache.get_or_compute(key, build, timeout=10)


def live_banner(_n, search):
    """While the last hour runs outside the expected range: say so, and record it once
    as an automatic note, once per excursion (whole-site views only, on a server that
    writes)."""
    shell = ShellState.from_query(parse_search(search))
    try:
        site = reads.resolve_site(shell.site, fresh=True)
        if site is None:
            return None
        now = reads.now(60)
        found = reads.shared(expected.hour_excursion, site, now, shell.pages, shell.tz,
                             seconds=reads.history_seconds())
    except Exception as exc:
        describe(exc)       # logged; no banner rather than a wrong one
        return None
    if found is None:
        return None
    if not shell.pages and not get_services().settings.readonly:
        _record_excursion(site, found)
    return excursion_banner(found.text[:1].upper() + found.text[1:], found.direction)


def _record_excursion(site: str, found: expected.Excursion) -> None:
    try:
        notes.record_excursion(get_services().db, site, found.hour, found.direction,
                               found.text)
    except HitboardError:
        log.exception("could not record the excursion")


# -- the form -----------------------------------------------------------------------------
def pick_time(click, search):
    """A click on the chart fills the form's time (the bucket's local time) and opens it."""
    points = (click or {}).get("points") or []
    if not points:
        return no_update, no_update
    when = points[0].get("customdata")
    when = when[0] if isinstance(when, list) and when else when
    if not isinstance(when, str):
        when = points[0].get("x")
    return (str(when) if when else no_update), True  # an offset, on DST days, is kept


def add_note(prefix: str):
    """The "Add note" callback of a page, returning a dict keyed as :func:`note_outputs`:
    the status, a patch drawing the note at once, the emptied text box and, on History,
    the list of notes under the chart."""
    listed = prefix == "history"

    def failed(reason: str) -> dict:
        outputs = {"status": message(reason), "figure": no_update, "text": no_update}
        return {**outputs, "list": no_update} if listed else outputs

    @requires("notes", refused=failed)
    def add(_clicks, when, text, kind, search):
        shell = ShellState.from_query(parse_search(search))
        try:
            if not when:
                raise HitboardError("click the chart (or type a time) to say when")
            at = validation.parse_time(str(when).strip().replace(" ", "T"), shell.tz)
            site = reads.resolve_site(shell.site)
            note = {"site": site, "time": validation.timestamp(at), "text": text or "",
                    "kind": kind or "note", "author": ""}
            note["id"] = notes.add_annotation(get_services().db, site, at, text or "",
                                              kind or "note")
        except HitboardError as exc:
            return failed(str(exc))
        note["text"] = notes.check_text(note["text"])
        done = {"status": "Note added.", "figure": _with_note(prefix, note, search), "text": ""}
        return {**done, "list": history_notes(search)} if listed else done

    return add


def note_outputs(prefix: str) -> dict:
    outputs = {"status": Output(f"{prefix}-note-status", "children"),
               "figure": Output(f"{prefix}-graph", "figure", allow_duplicate=True),
               "text": Output(f"{prefix}-note-text", "value")}
    if prefix == "history":
        outputs["list"] = Output("history-notes", "children", allow_duplicate=True)
    return outputs


def _with_note(prefix: str, note: dict, search):
    """A patch drawing the new note at once on the chart shown."""
    try:
        if prefix == "history":
            view = compute_view(search)
            index, granularity = view.current.index, view.period.granularity
        else:
            shell = ShellState.from_query(parse_search(search))
            window = int(parse_search(search).get("window", ["60"])[0])
            snapshot = reads.live_snapshot(note["site"], shell.pages, shell.tz, window)
            index, granularity = snapshot.series.index, "minute"
        if not inside(note["time"], index, granularity):
            return no_update
        patch = Patch()
        patch["data"].append(note_trace(note, index, granularity))
        patch["layout"]["yaxis2"] = NOTES_AXIS
        return patch
    except Exception as exc:
        describe(exc)       # logged; the note shows with the chart's next redraw
        return no_update


def register_note_callbacks(prefix: str) -> None:
    """Declare the page's note callbacks (called as Dash loads the page, like
    ``register_recent_callbacks``)."""
    callback(Output(f"{prefix}-note-time", "value"), Output(f"{prefix}-note-box", "open"),
             Input(f"{prefix}-graph", "clickData"), State("url", "search"),
             prevent_initial_call=True)(pick_time)
    callback(output=note_outputs(prefix),
             inputs=[Input(f"{prefix}-note-add", "n_clicks")],
             state=[State(f"{prefix}-note-time", "value"), State(f"{prefix}-note-text", "value"),
                    State(f"{prefix}-note-kind", "value"), State("url", "search")],
             prevent_initial_call=True)(add_note(prefix))
    if prefix == "history":
        callback(Output("history-notes", "children"), Input("url", "search"))(history_notes)
        callback(Output("history-notes-csv", "data"),
                 Output("history-alert", "children", allow_duplicate=True),
                 Input("history-notes-csv-button", "n_clicks"), State("url", "search"),
                 prevent_initial_call=True)(notes_csv)
    else:
        callback(Output("live-banner", "children"), Input("live-interval", "n_intervals"),
                 Input("url", "search"))(live_banner)
