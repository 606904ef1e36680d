"""components/breakdowns.py: a panel's visitors read "≈" where they are estimated, with
the error in the title, and as plain counts where exact; the KPI card the same."""

from __future__ import annotations

import pandas as pd
from dash import html

from components.breakdowns import KpiChange, breakdown_panel, kpi_change_cards
from components.numbers import estimate


def _cells(component) -> list:
    """Every table cell's content, in order."""
    found = []

    def walk(node):
        if isinstance(node, html.Td):
            found.append(node.children)
        children = getattr(node, "children", None)
        for child in children if isinstance(children, list | tuple) else [children]:
            if hasattr(child, "children"):
                walk(child)

    walk(component)
    return found


def test_estimated_visitors_read_approximately_and_exact_ones_plainly():
    frame = pd.DataFrame({"value": ["desktop", "mobile"], "hits": [2454, 12],
                          "visitors": pd.array([1266, 9], dtype="Int64"),
                          "visitors_error": pd.array([60, 0], dtype="Int64")})
    cells = _cells(breakdown_panel("device", "Devices", frame, lambda v: None))
    estimated, exact = cells[2], cells[5]
    assert estimated.children == "≈1,266" and "±60" in estimated.title
    assert cells[1] == "2,454" and exact == "9"


def test_a_frame_without_errors_holds_exact_visitors():
    """Frames from raw events (a filter, a page, Live) count visitors exactly."""
    frame = pd.DataFrame({"value": ["news.example"], "hits": [6],
                          "visitors": pd.array([3], dtype="Int64")})
    assert _cells(breakdown_panel("referrer", "Referrers", frame, lambda v: None))[2] == "3"


def test_the_kpi_card_shows_the_estimate_as_the_panels_do():
    (card,) = kpi_change_cards([KpiChange("v", "Visitors", estimate(1653, 27), None)])
    value = card.children[1]
    assert value.children.children == "≈1,653" and "±27" in value.children.title
