"""Annotations and the expected range, as History and Live both show them: the "Add
note" form and its callbacks (a click on the chart fills its time; a note added is drawn
at once), and the reads of notes and of the band. Each page brings its own part
(``history_notes.py``, ``live_notes.py``): how its chart is decorated, and which chart
and which buckets a new note is drawn on.

Notes are read fresh (a one-second cache): one made here shows at once. The band is
read through the history cache (``cache_seconds``): it changes with past weeks only.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import pandas as pd
from dash import Input, Output, Patch, State, callback, html, no_update

from components import message
from components.annotations import NOTES_AXIS, inside, note_form, note_trace
from dashboard import reads
from dashboard.authority import refusal, requires, who
from dashboard.feedback import describe
from dashboard.services import get_services
from dashboard.state import ShellState, parse_search
from queries import annotations as notes
from queries import validation
from queries.errors import HitboardError
from queries.reads import expected

# A page's chart as a new note is drawn on it: (its buckets, their granularity), for the
# note's site and the URL's search.
ChartIndex = Callable[[str, str], tuple[pd.DatetimeIndex, str]]


# -- layout -------------------------------------------------------------------------------
def notes_section(prefix: str, *below) -> html.Div:
    """The "Add note" form, and what the page shows below it."""
    refused = refusal("notes")
    return html.Div(className="notes", children=[
        note_form(prefix, refused.reason if refused else None), *below])


# -- reads --------------------------------------------------------------------------------
def range_notes(site: str, start: dt.datetime, end: dt.datetime) -> list[dict]:
    return reads.shared(notes.annotations_between, site, start, end,
                        seconds=reads.live_seconds())


def expected_band(site, start, end, granularity, pages, tz, source=None, humans=False):
    return reads.shared(expected.expected_range, site, start, end, granularity, pages, tz,
                        source=source, humans=humans, seconds=reads.history_seconds())


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


def add_note(prefix: str, chart_index: ChartIndex,
             listing: Callable[[str], object] | None = None):
    """The "Add note" callback of a page, returning a dict keyed as :func:`note_outputs`:
    the status, a patch drawing the note at once on the page's chart, the emptied text
    box and, where the page lists its notes (``listing``), that list again."""
    listed = listing is not None

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
            author = who().name if who().user else ""     # a user's notes carry its name
            note = {"site": site, "time": validation.timestamp(at), "text": text or "",
                    "kind": kind or "note", "author": author}
            note["id"] = notes.add_annotation(get_services().db, site, at, text or "",
                                              kind or "note", author or None)
        except HitboardError as exc:
            return failed(str(exc))
        note["text"] = notes.check_text(note["text"])
        done = {"status": "Note added.", "figure": _with_note(note, search, chart_index),
                "text": ""}
        return {**done, "list": listing(search)} if listed else done

    return add


def note_outputs(prefix: str, listed: bool = False) -> dict:
    outputs = {"status": Output(f"{prefix}-note-status", "children"),
               "figure": Output(f"{prefix}-graph", "figure", allow_duplicate=True),
               "text": Output(f"{prefix}-note-text", "value")}
    if listed:
        outputs["list"] = Output(f"{prefix}-notes", "children", allow_duplicate=True)
    return outputs


def _with_note(note: dict, search, chart_index: ChartIndex):
    """A patch drawing the new note at once on the chart shown."""
    try:
        index, granularity = chart_index(note["site"], search)
        if not inside(note["time"], index, granularity):
            return no_update
        patch = Patch()
        patch["data"].append(note_trace(note, index, granularity))
        patch["layout"]["yaxis2"] = NOTES_AXIS
        return patch
    except Exception as exc:
        describe(exc)       # logged; the note shows with the chart's next redraw
        return no_update


def register_note_callbacks(prefix: str, chart_index: ChartIndex,
                            listing: Callable[[str], object] | None = None) -> None:
    """Declare the note form's callbacks of a page (called as Dash loads the page, like
    ``register_recent_callbacks``); the page declares its own beside them."""
    callback(Output(f"{prefix}-note-time", "value"), Output(f"{prefix}-note-box", "open"),
             Input(f"{prefix}-graph", "clickData"), State("url", "search"),
             prevent_initial_call=True)(pick_time)
    callback(output=note_outputs(prefix, listed=listing is not None),
             inputs=[Input(f"{prefix}-note-add", "n_clicks")],
             state=[State(f"{prefix}-note-time", "value"), State(f"{prefix}-note-text", "value"),
                    State(f"{prefix}-note-kind", "value"), State("url", "search")],
             prevent_initial_call=True)(add_note(prefix, chart_index, listing))
