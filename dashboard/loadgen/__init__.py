"""The load generator: synthetic sites and pages, live traffic and backfilled history."""

from .history import backfill_history, history
from .model import TrafficModel
from .runner import LoadRunner

__all__ = ["LoadRunner", "TrafficModel", "backfill_history", "history"]
