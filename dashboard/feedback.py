"""Turning a failed read into words for the page (the traceback goes to the log)."""

from __future__ import annotations

import logging

import queries

log = logging.getLogger(__name__)


def describe(exc: Exception) -> str:
    """What to show a viewer: our own errors say what to fix; anything else is named
    and logged with its traceback."""
    if isinstance(exc, queries.HitboardError):
        return str(exc)
    log.error("dashboard read failed", exc_info=exc)
    return f"Could not read the data ({type(exc).__name__}: {exc}). Details are in the server log."
