"""KPI cards: a label, a big exact number, a note."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dash import html

from .numbers import count


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
