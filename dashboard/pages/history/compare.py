"""What History compares with: the previous period (the default), the same weekdays a
year earlier (364 days back, so Mondays face Mondays), or a period of the same length
from any start the viewer picks. The choice lives in the URL (``vs=yoy``, ``vs=custom&
vsstart=2025-11-01``) beside ``compare=1``, so a link reproduces it."""

from __future__ import annotations

import datetime as dt

from dash import Input, Output, State, callback, dcc, html, no_update

from components import message
from dashboard.feedback import describe
from dashboard.pages.history.url import controls_of, shown_period
from dashboard.ranges import Period
from dashboard.state import (
    ShellState,
    changed_search,
    choice,
    first,
    from_kwargs,
    parse_search,
    updated,
)
from queries import validation
from queries.errors import HitboardError, InvalidRangeError

COMPARE_WITH = {"previous": "previous period", "yoy": "a year earlier (364 days)",
                "custom": "a period starting…"}
YEAR = dt.timedelta(days=364)
LABEL = "%a %d %b %Y %H:%M"
NAMED = {False: "%d %b %Y", True: "%d %b %Y %H:%M"}     # a custom start, by whether it has a time


def comparison_period(query, shown: Period, tz: str) -> Period:
    """The period the URL compares ``shown`` with."""
    kind = choice(query, "vs", COMPARE_WITH, "previous")
    zone = validation.timezone(tz)
    if kind == "yoy":
        start = _wall_moved(shown.start, -YEAR, zone)
        return Period(start, _wall_moved(shown.end, -YEAR, zone), shown.granularity)
    if kind == "custom":
        text = first(query, "vsstart")
        if not text:
            raise InvalidRangeError("comparing with a custom period needs its start date")
        start = validation.timestamp(validation.parse_time(text, zone))
        if start >= shown.start:
            raise InvalidRangeError("the comparison period must start before the one shown")
        return Period(start, start + (shown.end - shown.start), shown.granularity)
    return shown.previous(tz)


def comparison_name(query, tz: str = "UTC") -> str:
    """What the compared period is called wherever it is named (the KPIs' notes, the
    chart's legend, the totals): "previous period", "a year earlier", "period from 01 Nov
    2025" (its start read in the view's zone, as the comparison reads it)."""
    kind = choice(query, "vs", COMPARE_WITH, "previous")
    if kind == "yoy":
        return "a year earlier"
    if kind == "custom":
        try:
            start = validation.parse_time(first(query, "vsstart") or "",
                                          validation.timezone(tz))
        except HitboardError:
            return "a custom period"      # the page's alert says why it draws none
        return f"period from {start:{NAMED[start.time() != dt.time()]}}"
    return "previous period"


def comparison_title(query, tz: str = "UTC") -> str:
    """The compared period's column title in the totals: its name, capitalised."""
    name = comparison_name(query, tz)
    return name[:1].upper() + name[1:]


def _wall_moved(when: dt.datetime, shift: dt.timedelta, zone) -> dt.datetime:
    local = when.astimezone(zone).replace(tzinfo=None) + shift
    return local.replace(tzinfo=zone).astimezone(dt.UTC)


def compare_controls(**query) -> html.Div:
    """"against: previous period | a year earlier | a period starting [date]"."""
    q = from_kwargs(query)
    return html.Div(className="compare-with", children=[
        html.Label(className="hint", children=["against ", dcc.Dropdown(
            id="history-compare-with", clearable=False, searchable=False,
            value=choice(q, "vs", COMPARE_WITH, "previous"),
            options=[{"label": v, "value": k} for k, v in COMPARE_WITH.items()])]),
        dcc.Input(id="history-compare-start", type="text", debounce=True,
                  value=first(q, "vsstart") or "", placeholder="YYYY-MM-DD",
                  className="compare-start"),
        html.Span(id="history-compare-note", className="hint"),
    ])


def choose_comparison(kind, start, search):
    """The controls → the URL (choosing one turns the comparison on)."""
    query = parse_search(search)
    if kind not in COMPARE_WITH:
        return no_update
    start = start or None
    shown = (choice(query, "vs", COMPARE_WITH, "previous"), first(query, "vsstart"))
    if (kind, start if kind == "custom" else shown[1]) == shown:
        return no_update  # a control reporting its value as it mounts changes nothing
    changes = {"vs": None if kind == "previous" else kind, "compare": "1",
               "vsstart": start if kind == "custom" else None}
    return changed_search(updated(query, **changes), search) or no_update


def describe_comparison(search):
    """Which comparison the chart draws and its dates, in the view's zone (the legend
    shows how its lines are drawn: dotted per page, one dashed total over a stack)."""
    query = parse_search(search)
    if not controls_of(query).compare:
        return ""
    try:
        tz = ShellState.from_query(query).tz
        other = comparison_period(query, shown_period(query), tz)
        zone = validation.timezone(tz)
        return (f"compared with {comparison_name(query, tz)}: "
                f"{other.start.astimezone(zone):{LABEL}} → "
                f"{other.end.astimezone(zone):{LABEL}}")
    except Exception as exc:
        return message(describe(exc))


def register_compare_callbacks() -> None:
    callback(Output("url", "search", allow_duplicate=True),
             Input("history-compare-with", "value"), Input("history-compare-start", "value"),
             State("url", "search"), prevent_initial_call=True)(choose_comparison)
    # describe_comparison: drawn by History's render, with the chart it describes
