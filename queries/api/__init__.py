"""The Stats API v2 (Plausible's query shape for what hitboard holds): a JSON question
checked (``parse``), answered from the representation that can count it
(``queries.reads.stats_api``) and shaped as Plausible answers (``engine``). Served by
``POST /api/v2/query`` and ``hitboard query``; described by ``openapi``."""

from .engine import run_query

__all__ = ["run_query"]
