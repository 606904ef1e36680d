"""KPI cards: a label, a big exact number, a note; and how a KPI's change against a
compared period reads ("+12.0 % vs a year earlier", a rate's "+17.4 pts")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dash import html

from .legend import COMPARED
from .numbers import count
from .tables import format_change, format_points


@dataclass(frozen=True)
class Kpi:
    id: str
    label: str
    value: int | None
    note: str = ""


def kpi_cards(kpis: Sequence[Kpi]) -> list:
    """One card per KPI; ``value`` None shows a dash (not known yet)."""
    return [
        html.Div(className="kpi", children=[
            html.Div(k.label, className="kpi-label"),
            html.Div(count(k.value), id=k.id, className="kpi-value"),
            html.Div(k.note, className="kpi-note"),
        ])
        for k in kpis
    ]


def change_note(change: float | None, *, new: bool = False, points: bool = False,
                good_when_up: bool = True, against: str = COMPARED, note: str = ""
                ) -> list:
    """A KPI card's note: its change (``points``: a rate's, in percentage points; else
    in %, "new" when there was nothing before) coloured by whether it is good news, then
    the period it is against and ``note``."""
    trend = "" if change is None or abs(change) < 0.05 else (
        "up" if (change > 0) == good_when_up else "down")
    text = format_points(change) if points else format_change(change, 1 if new else 0)
    return [html.Span(text, className=f"change {trend}"), f" vs {against}{note}"]
