"""What the due work is handed: the store, the settings, the chart drawer. The server
builds it from its services, ``hitboard notify run`` and ``reports send`` from their
own connection."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..settings import Settings
from .chart import render_chart


@dataclass
class NotifyContext:
    db: object
    settings: Settings
    render_chart: Callable | None = render_chart
