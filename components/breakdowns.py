"""The History page's panels: ranked tables with bars (value, hits, visitors), the filter
chip, KPI cards with their change, the 404 list. Plain HTML, so a long or hostile value
is text (Dash escapes it) and a table reflows on a phone. Links are given by the caller
(a value's link filters the view by it), so nothing here knows the URL's shape."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pandas as pd
from dash import dcc, html
from dash.development.base_component import Component

from .kpi import change_note
from .legend import COMPARED
from .numbers import amounts, count, duration, estimate, percent

UNCLICKABLE = {"(other)"}  # past a document's cap: no single value to filter by
MAX_SHOWN = 60


def percent_of(value) -> str:
    return percent(value, 0)


@dataclass(frozen=True)
class KpiChange:
    id: str
    label: str
    value: str | Component  # a figure as ``numbers`` shows it (an estimate is a Span)
    change: float | None  # % against the compared period; None: "new" or "–"
    note: str = ""
    good_when_up: bool = True
    new: bool = False       # nothing before and something now: "new" (else None is "–")
    points: bool = False    # a rate: ``change`` is its difference in percentage points


def _text(value: str) -> str:
    return value if len(value) <= MAX_SHOWN else value[: MAX_SHOWN - 1] + "…"


@dataclass(frozen=True)
class Column:
    """A number column of a ranked table: its header, the frame's field, its format;
    ``error`` the field holding each value's error, when it may be an estimate (shown
    ``≈``, the error in its title; a frame without the field holds exact values)."""

    header: str
    field: str
    shown: Callable[[object], str] = count
    error: str | None = None

    def cell(self, record: dict):
        if self.error is not None:
            return estimate(record[self.field], record.get(self.error))
        return self.shown(record[self.field])


VISITORS = Column("Visitors", "visitors", error="visitors_error")
HITS_COLUMNS = (Column("Hits", "hits"), VISITORS)
VISIT_COLUMNS = (Column("Visits", "visits"), Column("Bounce", "bounce_rate", percent_of),
                 Column("Duration", "visit_duration", duration))
# A goal's converting visitors, its conversions (events, or pageviews of its pages) and
# its conversion rate; its revenue goes under its name (``sub``).
GOAL_COLUMNS = (VISITORS, Column("Total", "conversions"),
                Column("CR", "conversion_rate", lambda value: percent(value, 1)))


def breakdown_panel(dim: str, title: str, frame: pd.DataFrame,
                    href: Callable[[str], str | None], active: str | None = None,
                    extra=None, panel_id: str | None = None,
                    empty: str = "No hits", columns: Sequence[Column] = HITS_COLUMNS,
                    sub: str | None = None) -> html.Section:
    """One card: the frame's rows (value and ``columns``: hits and visitors, or an entry
    page's visits, bounce rate and duration) in the frame's order, each with a bar
    scaled to the first column's largest. ``href(value)`` is the link filtering by the
    value (None: not a link); ``active`` is the value the view is filtered by; ``empty``
    what an empty frame says; ``sub`` a field shown under a value, when not empty."""
    first = columns[0].field
    top = int(frame[first].max()) if len(frame) else 0
    rows = []
    for record in frame.to_dict("records"):
        value, size = str(record["value"]), int(record[first])
        link = None if value in UNCLICKABLE else href(value)
        label = (dcc.Link(_text(value), href=link, className="bd-link", title=value)
                 if link else html.Span(_text(value), title=value))
        if sub and record.get(sub):
            label = html.Span([label, html.Span(amounts(str(record[sub])),
                                                className="bd-sub")])
        width = f"{100 * size / top:.1f}%" if top else "0%"
        rows.append(html.Tr(className="bd-row" + (" bd-active" if value == active else ""),
                            children=[
            html.Td(className="bd-value", children=[
                html.Div(className="bd-bar", style={"width": width}), label]),
            *(html.Td(column.cell(record), className="num") for column in columns),
        ]))
    # More than two numbers leave a phone's value column narrow: values wrap instead.
    wide = " bd-wrap" if len(columns) > 2 else ""
    body = html.Table(className="bd-table" + wide, children=[
        html.Thead(html.Tr([html.Th(title),
                            *(html.Th(c.header, className="num") for c in columns)])),
        html.Tbody(rows or [html.Tr(html.Td(empty, colSpan=len(columns) + 1,
                                            className="muted"))]),
    ])
    return html.Section(className="card bd-card", id=panel_id or f"history-panel-{dim}",
                        children=[body, extra] if extra is not None else [body])


def not_found_list(frame: pd.DataFrame, empty: str = "No 404 in this range.") -> html.Div:
    """The most requested paths answered 404; ``empty`` what none says."""
    # The count comes first and floats right: the path wraps beside it, so a path that
    # fills its line never pushes the count into the next item.
    items = [html.Li([html.Span(count(r.hits), className="num"),
                      html.Span(_text(str(r.path)), className="bd-path", title=str(r.path))])
             for r in frame.itertuples(index=False)]
    return html.Div(className="bd-notfound", id="history-notfound", children=[
        html.H3("Not found (404)", className="bd-subtitle"),
        html.Ol(items) if items else html.P(empty, className="muted"),
    ])


def filter_chip(label: str, remove_href: str) -> html.Span:
    """The active filter, with a × link that removes it."""
    return html.Span(className="chip", id="history-chip", children=[
        html.Span(_text(label), title=label),
        dcc.Link("×", href=remove_href, className="chip-x", id="history-chip-remove",
                 title="Remove this filter"),
    ])


def kpi_change_cards(kpis: Sequence[KpiChange], against: str = COMPARED) -> list:
    """KPI cards whose note is the change against the compared period, named
    ``against`` ("a year earlier")."""
    return [html.Div(className="kpi", children=[
        html.Div(k.label, className="kpi-label"),
        html.Div(k.value, id=k.id, className="kpi-value"),
        html.Div(className="kpi-note", children=change_note(
            k.change, new=k.new, points=k.points, good_when_up=k.good_when_up,
            against=against, note=k.note)),
    ]) for k in kpis]
