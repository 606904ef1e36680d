"""Annotations and the expected range on a time chart, the list of notes under it, the
note form and the Live page's banner. Never imports pymongo: notes arrive as dicts
(``queries.annotations``), the band as a DataFrame (``queries.reads.expected``).

Notes are user data: every text reaches the page as text (React escapes it; Plotly hover
text is escaped here), so a ``<script>`` note shows its characters and runs nothing.
"""

from __future__ import annotations

import datetime as dt

import pandas as pd
import plotly.graph_objects as go
from dash import dcc, html

from .legend import COMPARED
from .plotly_text import escape
from .theme import palette
from .timeaxis import time_axis

KIND_COLORS = {"note": "#7048e8", "deploy": "#1c7ed6", "load-test": "#f08c00",
               "spike": "#e8590c", "backfill": "#0ca678", "anomaly": "#e03131"}
KIND_LABELS = {"note": "Note", "deploy": "Deploy", "load-test": "Load test",
               "spike": "Spike", "backfill": "Backfill", "anomaly": "Anomaly"}
NOTES_NAME = "Notes"
BAND_COLOR = {"light": "rgba(34, 139, 230, 0.13)", "dark": "rgba(116, 192, 252, 0.16)"}
OUTSIDE_COLOR = "#e03131"
STACK_STEP = 0.07       # a marker's height on NOTES_AXIS
NOTES_AXIS = {"overlaying": "y", "range": [0, 1.04], "visible": False, "fixedrange": True}


def positions(times, index: pd.DatetimeIndex, granularity: str) -> list[str]:
    """Where instants ``times`` are drawn on a chart of buckets ``index`` (see
    ``timeaxis``: local wall-clock time, or absolute time shifted by the first offset)."""
    if not len(index):
        return []
    zone = index.tz
    absolute = time_axis(index, granularity).absolute
    shift = index[0].utcoffset()
    out = []
    for t in times:
        t = pd.Timestamp(t)
        local = (t.tz_convert("UTC").tz_localize(None) + shift) if absolute \
            else t.tz_convert(zone).tz_localize(None)
        out.append(local.strftime("%Y-%m-%d %H:%M:%S"))
    return out


def add_annotations(figure: go.Figure, notes: list[dict], index: pd.DatetimeIndex,
                    granularity: str, theme: str = "light", *, previous: list[dict] = (),
                    previous_shift: dt.timedelta | None = None,
                    compared: str = COMPARED) -> go.Figure:
    """A vertical line per note and a marker at its top whose hover says what happened;
    ``previous`` notes (of the compared period, named ``compared``, moved by
    ``previous_shift`` onto the current axis) dotted and grey, under its overlay."""
    notes = [n for n in notes if inside(n["time"], index, granularity)]
    moved = [{**n, "time": n["time"] + previous_shift} for n in previous] \
        if previous_shift is not None else []
    moved = [n for n in moved if inside(n["time"], index, granularity)]
    if not notes and not moved:
        return figure
    zone = index.tz
    shapes = list(figure.layout.shapes or ())
    for group, name, dash_style in ((notes, NOTES_NAME, "dash"),
                                    (moved, escape(f"Notes ({compared})"), "dot")):
        if not group:
            continue
        x = positions([n["time"] for n in group], index, granularity)
        colors = [KIND_COLORS.get(n["kind"], KIND_COLORS["note"]) if dash_style == "dash"
                  else palette(theme)["muted"] for n in group]
        for where, color in zip(x, colors, strict=True):
            shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": where,
                           "x1": where, "y0": 0, "y1": 1, "layer": "below", "name": name,
                           "line": {"color": color, "width": 1.5, "dash": dash_style}})
        prefix = escape(compared) + " · " if dash_style == "dot" else ""
        heights = _stacked(group, index)
        # One trace per colour (a kind's): a legend entry takes its trace's first colour.
        for color in dict.fromkeys(colors):
            kinds = {n["kind"] for n, c in zip(group, colors, strict=True) if c == color}
            picked = [i for i, c in enumerate(colors) if c == color]
            figure.add_trace(go.Scatter(
                x=[x[i] for i in picked], y=[heights[i] for i in picked], yaxis="y2",
                mode="markers",
                name=name if dash_style == "dot" else notes_name(kinds),
                marker={"symbol": "triangle-down", "size": 11, "color": color},
                hovertext=[prefix + hover_text(group[i], zone) for i in picked],
                hoverinfo="text", showlegend=True))
    figure.update_layout(shapes=shapes, yaxis2=NOTES_AXIS)
    return figure


def _stacked(group: list[dict], index: pd.DatetimeIndex) -> list[float]:
    """Each note's marker height: the second note of a bucket under the first, and so on
    (the demo notes its backfill and its load test in the same second)."""
    buckets = index.searchsorted([pd.Timestamp(n["time"]) for n in group], side="right")
    seen: dict[int, int] = {}
    heights = []
    for bucket in buckets.tolist():
        heights.append(1 - STACK_STEP * seen.get(bucket, 0))
        seen[bucket] = seen.get(bucket, 0) + 1
    return heights


def notes_name(kinds) -> str:
    """A legend entry of notes: "Notes", or "Notes · Deploy" for the kind it draws."""
    kinds = set(kinds) & set(KIND_LABELS) - {"note"}
    return NOTES_NAME if len(kinds) != 1 else f"{NOTES_NAME} · {KIND_LABELS[kinds.pop()]}"


def note_trace(note: dict, index: pd.DatetimeIndex, granularity: str) -> dict:
    """One note as a trace of its own (its line and its marker), to add to a chart already
    drawn (a ``Patch`` appends it, with ``NOTES_AXIS`` as ``layout.yaxis2``)."""
    where = positions([note["time"]], index, granularity)[0]
    color = KIND_COLORS.get(note["kind"], KIND_COLORS["note"])
    text = hover_text(note, index.tz)
    return {"type": "scatter", "x": [where, where], "y": [0, 1], "yaxis": "y2",
            "mode": "lines+markers", "name": notes_name([note["kind"]]),
            "showlegend": False,
            "line": {"color": color, "width": 1.5, "dash": "dash"},
            "marker": {"symbol": "triangle-down", "size": [0, 11], "color": color},
            "hovertext": [text, text], "hoverinfo": "text"}


def hover_text(note: dict, zone) -> str:
    """The marker's hover: kind, local time, text and author, escaped for Plotly."""
    when = pd.Timestamp(note["time"]).tz_convert(zone)
    who = f" — {note['author']}" if note.get("author") else ""
    scope = " (all sites)" if note.get("site") == "*" else ""
    text = _wrap(escape(note["text"]))
    return (f"<b>{KIND_LABELS.get(note['kind'], note['kind'])}</b>{scope} · "
            f"{when:%a %d %b %H:%M}<br>{text}{escape(who)}")


def add_band(figure: go.Figure, band: pd.DataFrame, weeks: int, index: pd.DatetimeIndex,
             granularity: str, totals: pd.Series | None = None, theme: str = "light",
             incomplete: bool = False) -> go.Figure:
    """Shade the expected range under the lines and mark the buckets of ``totals``
    outside it, beyond the noise bounds ``below``/``above`` when the band has them (the
    last bucket only when it is complete)."""
    band = band[(band.index >= index[0]) & (band.index <= index[-1])].dropna() \
        if len(index) else band.iloc[:0]
    if band.empty:
        return figure
    x = positions(band.index, index, granularity)
    what = "weekday and hour" if granularity != "day" else "weekday"
    what = "weekday and minute" if granularity == "minute" else what
    # Three short lines: two longer ones ran past a phone's chart, cut off.
    name = (f"Expected range (10th–90th percentile<br>of the same {what},<br>"
            f"previous {weeks} weeks)")
    low = go.Scatter(x=x, y=band["low"], mode="lines", line={"width": 0},
                     hoverinfo="skip", showlegend=False, name="expected low")
    high = go.Scatter(x=x, y=band["high"], mode="lines", line={"width": 0}, fill="tonexty",
                      fillcolor=BAND_COLOR.get(theme, BAND_COLOR["light"]), name=name,
                      customdata=band["low"],
                      hovertemplate="expected %{customdata:,.0f}–%{y:,.0f}<extra></extra>")
    figure.add_traces([low, high])  # after the lines: data[0] stays the first page
    if totals is not None:
        checked = totals.iloc[:-1] if incomplete else totals
        joined = band.join(checked.rename("total"), how="inner")
        above = joined["above"] if "above" in joined else joined["high"]
        below = joined["below"] if "below" in joined else joined["low"]
        out = joined[(joined["total"] > above) | (joined["total"] < below)]
        if len(out):
            figure.add_trace(go.Scatter(
                x=positions(out.index, index, granularity), y=out["total"], mode="markers",
                name="Outside the expected range",
                marker={"symbol": "circle-open", "size": 12, "color": OUTSIDE_COLOR,
                        "line": {"width": 2}},
                hovertemplate="outside the expected range: %{y:,}<extra></extra>"))
    return figure


def notes_list(notes: list[dict], tz, list_id: str) -> html.Div:
    """The notes of the range, oldest first, as text."""
    if not notes:
        return html.Div("No notes in this range.", id=list_id, className="hint")
    items = []
    for note in notes:
        when = pd.Timestamp(note["time"]).tz_convert(tz)
        items.append(html.Li(className="note-item", children=[
            html.Span(KIND_LABELS.get(note["kind"], note["kind"]),
                      className=f"note-kind note-kind-{note['kind']}"),
            html.Time(f"{when:%a %d %b %Y %H:%M}", dateTime=when.isoformat(),
                      className="note-time"),
            html.Span(note["text"], className="note-text"),
            html.Span(" · ".join(filter(None, [
                note.get("author"), "all sites" if note.get("site") == "*" else None])),
                className="hint note-meta"),
        ]))
    return html.Div(html.Ul(items, className="note-list"), id=list_id)


def note_form(prefix: str, refused: str | None = None) -> html.Details:
    """"Add note": the time is filled by a click on the chart (or typed, in the view's
    zone); the text is at most 280 characters. ``refused``: why this viewer may not add
    one (shown, with the fields disabled)."""
    off = refused is not None
    return html.Details(className="note-form", id=f"{prefix}-note-box", children=[
        html.Summary("Add note"),
        html.P(refused, className="hint note-signin") if off else None,
        html.Div(className="note-fields", children=[
            html.Label(["At", dcc.Input(id=f"{prefix}-note-time", type="text",
                                        placeholder="click the chart, or YYYY-MM-DD HH:MM",
                                        debounce=False, className="note-input", disabled=off,
                                        style={"width": "17em"})]),
            html.Label(["Note", dcc.Input(id=f"{prefix}-note-text", type="text",
                                          maxLength=280, placeholder="what happened",
                                          debounce=False, className="note-input",
                                          disabled=off, style={"width": "22em"})]),
            html.Label(["Kind", dcc.Dropdown(
                id=f"{prefix}-note-kind", clearable=False, searchable=False, value="note",
                disabled=off, options=[{"label": KIND_LABELS[k], "value": k}
                                       for k in ("note", "deploy", "load-test", "spike",
                                                 "backfill")])]),
            html.Button("Add note", id=f"{prefix}-note-add", n_clicks=0, className="btn",
                        disabled=off),
            html.Span(id=f"{prefix}-note-status", className="hint", role="status"),
        ]),
    ])


def excursion_banner(text: str, direction: str) -> html.Div:
    return html.Div(text, className=f"notice banner banner-{direction}", role="status",
                    id="live-banner-text")


def _wrap(text: str, width: int = 60) -> str:
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + len(word) + 1 > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return "<br>".join([*lines, line])


def inside(when, index: pd.DatetimeIndex, granularity: str) -> bool:
    if not len(index):
        return False
    step = {"minute": pd.Timedelta(minutes=1), "hour": pd.Timedelta(hours=1),
            "day": pd.Timedelta(days=1)}[granularity]
    return index[0] <= pd.Timestamp(when) < index[-1] + step
