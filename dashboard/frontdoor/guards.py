"""The front door's body limits inside Flask, and requests Dash would answer with a 500.

Under ``hitboard serve`` the worker has read and measured a body before Flask sees it.
Under any other server (``flask run``, the browser tests' threaded server, a WSGI server
of one's own) Flask refuses a body over its route's limit with 413 as it reads it, by
the same table. Dash trusts what reaches it: a path under ``/_dash-component-suites/``
that names no file it serves (``..``, NUL, an unknown package, junk) raises its
``DependencyException``, and a callback request that is not one of the app's (no such
output, inputs of another shape) a ``KeyError`` or a ``TypeError``; Flask would answer
both with a 500 and a traceback in the log. They are a 404 and a 400, with a JSON reason
as every refusal of the app (a 413 too). A callback body nested too deep, and a callback
that cannot use the values it was sent, are ``callback_guard``'s.
"""

from __future__ import annotations

import dash
import flask
from dash.exceptions import DependencyException
from werkzeug.exceptions import RequestEntityTooLarge

from . import callback_guard
from .limits import CALLBACK_PATH, Limits


def install(app: dash.Dash, limits: Limits) -> None:
    def limit_body():
        flask.request.max_content_length = limits.body_limit(flask.request.path)
        if flask.request.path == CALLBACK_PATH and flask.request.method == "POST":
            refused = callback_guard.nesting_refusal()
            if refused is not None:
                return refused
            problem = callback_problem(app.callback_map, flask.request.get_json(silent=True))
            if problem:
                return flask.jsonify(error=problem), 400
        return None

    app.server.before_request(limit_body)
    callback_guard.guard_dispatch(app, CALLBACK_PATH)
    app.server.register_error_handler(DependencyException, _not_found)
    app.server.register_error_handler(RequestEntityTooLarge, _too_large)


def callback_problem(callbacks: dict, body) -> str | None:
    """Why ``body`` is not a request for one of ``callbacks`` (Dash's ``callback_map``),
    or None. Only its shape is checked: the values are the callback's business."""
    if not isinstance(body, dict):
        return "a callback request is a JSON object"
    output = body.get("output")
    callback = callbacks.get(output) if isinstance(output, str) else None
    if callback is None:
        return "no such callback"
    for key in ("inputs", "state"):
        given = body.get(key, [])
        if not (isinstance(given, list) and len(given) == len(callback[key])
                and all(map(_properties, given))):
            return f"the callback's {key} are not those it declares"
    declared, outputs = callback["output"], body.get("outputs")
    if isinstance(declared, list):
        fits = isinstance(outputs, list) and len(outputs) == len(declared) \
            and all(map(_output, declared, outputs))
    else:
        fits = callback.get("no_output") or _output(declared, outputs)
    if not fits:
        return "the callback's outputs are not those it declares"
    changed = body.get("changedPropIds", [])
    if not (isinstance(changed, list) and all(isinstance(prop, str) for prop in changed)):
        return "changedPropIds is a list of strings"
    return None


def _properties(value) -> bool:
    """A component's property (``{"id": ..., "property": ...}``), or a list of them (a
    pattern-matching input)."""
    if isinstance(value, list):
        return all(map(_property, value))
    return _property(value)


def _output(declared, given) -> bool:
    """A pattern-matching output (its id a dict) is sent as a list of properties, any
    other as one."""
    if isinstance(declared.component_id, dict):
        return isinstance(given, list) and all(map(_property, given))
    return _property(given)


def _property(value) -> bool:
    return isinstance(value, dict) and "id" in value and isinstance(value.get("property"),
                                                                    str)


def _not_found(_exc: DependencyException):
    return flask.jsonify(error="no such file"), 404


def _too_large(_exc: RequestEntityTooLarge):
    """The worker's answer, in the app's words (a JSON reason, as every refusal)."""
    limit = flask.request.max_content_length
    return flask.jsonify(error=f"the body of a request to this address may be at most "
                               f"{limit:,} bytes"), 413
