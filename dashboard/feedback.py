"""Turning a failed read into words for the page (the traceback goes to the log)."""

from __future__ import annotations

import logging

import queries

from .authority.scope import SiteRefused
from .frontdoor.callback_guard import BAD_INPUT, dispatching, raised_at

log = logging.getLogger(__name__)


def describe(exc: Exception) -> str:
    """What to show a viewer: our own errors say what to fix; anything else is named
    and logged with its traceback, but for the errors a callback's values of the wrong
    type raise (anyone may post any): one line saying where. A site refused to the
    viewer is no failed read: it goes on, to refuse the whole request (403)."""
    if isinstance(exc, SiteRefused):
        raise exc
    if isinstance(exc, queries.HitboardError):
        return str(exc)
    if dispatching.get() and isinstance(exc, BAD_INPUT):
        log.warning("dashboard read failed on a callback's values: %s: %s (at %s)",
                    type(exc).__name__, " ".join(str(exc).split())[:200], raised_at(exc))
    else:
        log.error("dashboard read failed", exc_info=exc)
    return f"Could not read the data ({type(exc).__name__}: {exc}). Details are in the server log."
