"""The load generator's traffic: synthetic sites and pages (``model``), the people who
visit them (``visitors``), live hits at a rate (``runner``) with their raw events
(``events``), and past days backfilled (``history``). The dashboard's page and Flask hook
that drive it are in ``dashboard/loadgen/``."""

from .history import backfill_history, history
from .model import TrafficModel
from .runner import LoadRunner

__all__ = ["LoadRunner", "TrafficModel", "backfill_history", "history"]
