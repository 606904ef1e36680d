"""``@requires(action)``: the one check every state-changing route and callback passes.

On a Flask route a refusal is the HTTP answer (401, 403 or 429, JSON). A Dash callback
names what its outputs show instead (``refused``: the reason in, the outputs out), so a
refused click says why in the page rather than failing silently. The check runs inside
the function, so it holds on every path that reaches it (Dash's dispatcher, a callback
API endpoint, a test calling the route).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

import flask

from .principal import ACTIONS, Refusal, client_address, refusal

log = logging.getLogger(__name__)


def requires(action: str, refused: Callable[[str], Any] | None = None):
    """Run the decorated function only when the current principal can do ``action``."""
    if action not in ACTIONS:
        raise KeyError(f"unknown action {action!r}: one of {', '.join(ACTIONS)}")

    def decorate(func):
        @functools.wraps(func)
        def guarded(*args, **kwargs):
            refused_now = refusal(action, page=refused is not None)
            if refused_now is None:
                return func(*args, **kwargs)
            log.info("%s refused to %s: %s", action, client_address(), refused_now.status)
            return refused(refused_now.reason) if refused else http_refusal(refused_now)

        guarded.hitboard_action = action
        return guarded

    return decorate


def http_refusal(refused: Refusal) -> flask.Response:
    response = flask.jsonify(error=refused.reason)
    response.status_code = refused.status
    if refused.status == 401:
        response.headers["WWW-Authenticate"] = 'Bearer realm="hitboard"'
    if refused.retry_after:
        response.headers["Retry-After"] = str(refused.retry_after)
    return response
