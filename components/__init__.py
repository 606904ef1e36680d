"""Reusable UI pieces: figure builders (DataFrame in, ``go.Figure`` out), KPI cards, tables,
messages. Never imports pymongo or queries."""

from .bars import top_pages_table
from .controls import segmented
from .feedback import empty_state, message
from .kpi import Kpi, kpi_cards
from .legend import page_colors, page_label
from .notice import notice_figure
from .tables import change_percent, format_change, totals_table
from .theme import GRAPH_CONFIG
from .timeseries import MODES, aligned_previous, plotted_frame, timeseries_figure

__all__ = [
    "GRAPH_CONFIG",
    "MODES",
    "Kpi",
    "aligned_previous",
    "change_percent",
    "empty_state",
    "format_change",
    "kpi_cards",
    "message",
    "notice_figure",
    "page_colors",
    "page_label",
    "plotted_frame",
    "segmented",
    "timeseries_figure",
    "top_pages_table",
    "totals_table",
]
