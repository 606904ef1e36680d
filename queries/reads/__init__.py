"""The read door of the pages and the CLI: one call per chart, which picks the stored
representation that answers it (pre-aggregated statistics, dimension counters, sketches,
raw events) so that the choice lives here, not in the dashboard."""

from .history import Chart, Figures, chart, chart_of, figures, figures_of
from .query import Condition, Query

__all__ = ["Chart", "Condition", "Figures", "Query", "chart", "chart_of", "figures",
           "figures_of"]
