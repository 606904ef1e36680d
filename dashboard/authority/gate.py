"""Once the store holds a user, every request needs a principal except those that carry
their own credential or none by nature: the beacon, health checks, signing in, share
links, the Stats API v2 (its bearer key), an email's unsubscribe link, and Dash's static
files. A page asked without one answers 303 to the sign-in page (``next``: where it was
going); anything else (Dash's layout and callbacks, ``/api/*``, downloads) answers 401.
With no user nothing changes: reading stays open, as before accounts existed.

An API key opens nothing here: it reads the Stats API only (``/api/v2/``, exempt).
A signed-in viewer asking a page for another site (``?site=``) is refused here too
(403, the same words whether the site exists or not); its callbacks are refused by
``scope`` wherever the site is read.
"""

from __future__ import annotations

from urllib.parse import quote

import flask

from .guard import http_refusal
from .principal import Refusal, _identity, _throttled, users_exist
from .scope import REFUSED
from .sessions import SIGNIN_PATH

EXEMPT_PATHS = frozenset({"/hit", "/hit.js", "/healthz", SIGNIN_PATH, "/_dash-dependencies"})
EXEMPT_PREFIXES = ("/share/", "/api/v2/", "/unsubscribe/", "/assets/",
                   "/_dash-component-suites/")
FILE_SUFFIXES = (".csv", ".zip", ".json", ".txt")
PAGE_METHODS = frozenset({"GET", "HEAD"})
SITE_ARGS = ("site", "edit")            # where a page's address names a site


def exempt(path: str) -> bool:
    return path in EXEMPT_PATHS or path.startswith(EXEMPT_PREFIXES)


def is_page(request: flask.Request) -> bool:
    """A page a browser navigates to (not Dash's internals, the API or a download)."""
    path = request.path
    return (request.method in PAGE_METHODS and not path.startswith(("/_", "/api/"))
            and not path.lower().endswith(FILE_SUFFIXES))


def gate_refusal(request: flask.Request) -> flask.Response | None:
    """None when ``request`` may go on; else the answer that sends it to sign in."""
    if exempt(request.path):
        return None
    identity = _identity()
    principal = identity.principal
    if principal.via and principal.via != "key":      # an API key reads /api/v2/ only
        named = [request.args.get(key) for key in SITE_ARGS]
        if is_page(request) and not all(principal.sees(site) for site in named if site):
            return _text(403, REFUSED)
        return None
    if not users_exist():
        return None
    if is_page(request):
        target = request.full_path.rstrip("?")
        response = flask.redirect(f"{SIGNIN_PATH}?next={quote(target, safe='/')}", code=303)
        response.headers["Cache-Control"] = "no-store"
        return response
    if identity.failure == "throttled":
        return http_refusal(_throttled(identity.retry_after))
    return http_refusal(Refusal(401, "Sign in first: this server's pages and API need a "
                                     f"user or the admin token (open {SIGNIN_PATH})."))


def _text(status: int, text: str) -> flask.Response:
    response = flask.Response(text + "\n", status=status, mimetype="text/plain")
    response.headers["Cache-Control"] = "no-store"
    return response
