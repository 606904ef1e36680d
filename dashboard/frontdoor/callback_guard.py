"""Callback requests no browser sends, refused with 400 and one log line.

Anyone can post to ``/_dash-update-component``: a value of the wrong type (a string
where a figure goes, a dict where a date goes) makes a callback raise a ``TypeError``,
``ValueError``, ``KeyError``..., which Flask would answer with a 500 and a traceback in
the log. Two guards, around every callback rather than inside each:

- before Dash reads the body, its nesting: a body nested past ``MAX_DEPTH`` (JSON
  arrays and objects; brackets inside strings are text) is refused without being
  parsed, since parsing and then every function that walks the value would recurse
  (a 4 MiB body is measured in ~100 ms at worst);
- around Dash's dispatch, the errors bad input raises: answered 400, logged as one line
  naming the callback, the error and where it was raised, so a real bug stays findable.

A callback's own ``describe`` (``dashboard.feedback``) sees the same errors first when
the callback catches them: inside a callback request it lets them through to this guard.
"""

from __future__ import annotations

import functools
import logging
import traceback
from contextvars import ContextVar
from pathlib import Path

import dash
import flask
import numpy as np
from dash.exceptions import DashException, PreventUpdate

log = logging.getLogger(__name__)
MAX_DEPTH = 64
# Errors a value of the wrong type or shape raises, in a callback or in Dash around it
# (Dash's own: a page path it cannot route, a return value it cannot send).
BAD_INPUT = (TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError,
             OverflowError, DashException)
dispatching: ContextVar[bool] = ContextVar("hitboard_dispatching", default=False)

CHUNK = 1 << 20
QUOTE, OPEN, CLOSE = ord('"'), b"[{", b"]}"
_ROOT = Path(__file__).resolve().parents[2]


def too_deep(data: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether the JSON text ``data`` nests arrays and objects past ``limit`` (or closes
    one it never opened, or leaves one open), found without parsing it: escaped
    backslashes and quotes removed, the quotes left delimit strings, and the running
    count of brackets outside them is the depth, a megabyte at a time in numpy."""
    if data.count(b"[") + data.count(b"{") <= limit:
        return False
    text = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    depth = quotes = 0
    for start in range(0, len(text), CHUNK):
        chunk = np.frombuffer(text, np.uint8, min(CHUNK, len(text) - start), start)
        quoted = np.cumsum(chunk == QUOTE, dtype=np.int64) + quotes
        outside = quoted % 2 == 0
        steps = (((chunk == OPEN[0]) | (chunk == OPEN[1])) & outside).astype(np.int8) \
            - (((chunk == CLOSE[0]) | (chunk == CLOSE[1])) & outside)
        levels = np.cumsum(steps, dtype=np.int64) + depth
        if levels.max() > limit or levels.min() < 0:
            return True
        depth, quotes = int(levels[-1]), int(quoted[-1])
    return depth != 0


def nesting_refusal() -> flask.Response | None:
    """A 400 for a callback body nested too deep, before anything parses it."""
    if not too_deep(flask.request.get_data(cache=True)):
        return None
    log.warning("callback refused from %s: its body nests past %d levels",
                flask.request.remote_addr, MAX_DEPTH)
    response = flask.jsonify(error=f"a callback request is nested at most {MAX_DEPTH} "
                                   "levels deep")
    response.status_code = 400
    return response


def guard_dispatch(app: dash.Dash, path: str) -> None:
    """Wrap the view Dash serves callbacks with, so bad input is a 400 with one line."""
    server = app.server
    endpoint = next(rule.endpoint for rule in server.url_map.iter_rules() if rule.rule == path)
    view = server.view_functions[endpoint]

    @functools.wraps(view)
    def guarded(*args, **kwargs):
        token = dispatching.set(True)
        try:
            return view(*args, **kwargs)
        except PreventUpdate:
            raise                         # Dash's "nothing to change": its own 204
        except BAD_INPUT as exc:
            return _refused(exc)
        finally:
            dispatching.reset(token)

    server.view_functions[endpoint] = guarded


def _refused(exc: BaseException) -> flask.Response:
    body = flask.request.get_json(silent=True)
    output = body.get("output") if isinstance(body, dict) else None
    text = " ".join(str(exc).split())[:200]
    log.warning("callback refused from %s: %s raised %s: %s (at %s)",
                flask.request.remote_addr, str(output)[:200], type(exc).__name__, text,
                raised_at(exc))
    response = flask.jsonify(error=f"the callback cannot use these values "
                                   f"({type(exc).__name__})")
    response.status_code = 400
    return response


def raised_at(exc: BaseException) -> str:
    """Where ``exc`` was raised, as ``file:line in function``: the last frame of this
    project's code (else the last frame), on one line."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return "?"
    ours = [f for f in frames if f.filename.startswith(str(_ROOT))
            and "/.venv" not in f.filename and "site-packages" not in f.filename]
    frame = (ours or frames)[-1]
    name = Path(frame.filename)
    shown = name.relative_to(_ROOT) if name.is_relative_to(_ROOT) else name.name
    return f"{shown}:{frame.lineno} in {frame.name}"
