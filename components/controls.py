"""Small controls shared by the pages."""

from __future__ import annotations

from collections.abc import Mapping

from dash import dcc


def segmented(component_id: str, options: Mapping[str, str], value: str) -> dcc.RadioItems:
    """A row of mutually exclusive buttons (``options``: value → label)."""
    return dcc.RadioItems(
        id=component_id, value=value, className="segmented", inline=True,
        options=[{"label": label, "value": key} for key, label in options.items()],
    )
