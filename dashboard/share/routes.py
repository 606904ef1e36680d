"""The routes of a share link, all under ``/share/<token>``, so the token travels with
every request the page makes (its data, its CSV, its unlock): no cookie or header meant
for the dashboard's own routes is read here, and nothing here grants anything there.

The link alone decides the site and the filter; the URL only picks a range, a zone, a
theme and embedding (``views.Params``). Every share response says which origins may
frame it (``frame-ancestors``: the link's, default any); every other response of the
server ``frame-ancestors 'self'``.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import flask
import plotly
from pymongo.errors import PyMongoError

from queries import shares
from queries.errors import HitboardError

from ..authority.principal import client_address, throttle
from ..authority.sessions import is_https
from ..services import Services, get_services
from . import views
from .page import password_page, share_page

log = logging.getLogger(__name__)
PREFIX = "/share"
UNLOCK_COOKIE = "hitboard_share"
STATIC = Path(__file__).resolve().parent / "static"
PLOTLY_JS = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"
STATIC_FILES = {"share.js": (STATIC / "share.js", "text/javascript"),
                "share.css": (STATIC / "share.css", "text/css"),
                "plotly.min.js": (PLOTLY_JS, "text/javascript")}
NO_STORE = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer",
            "X-Content-Type-Options": "nosniff"}
# A share page runs only its own scripts; Plotly sets inline styles.
PAGE_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
               "img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
               "form-action 'none'; object-src 'none'")
OTHERS_POLICY = "frame-ancestors 'self'"
UNKNOWN = "This share link is unknown or was revoked."


def register_share(server: flask.Flask, services: Services) -> None:
    server.add_url_rule(f"{PREFIX}/static/<name>", "hitboard_share_static", static_file)
    server.add_url_rule(f"{PREFIX}/<token>", "hitboard_share", page)
    server.add_url_rule(f"{PREFIX}/<token>/data", "hitboard_share_data", data)
    server.add_url_rule(f"{PREFIX}/<token>/live", "hitboard_share_live", live_data)
    server.add_url_rule(f"{PREFIX}/<token>/history.csv", "hitboard_share_csv", csv)
    server.add_url_rule(f"{PREFIX}/<token>/unlock", "hitboard_share_unlock", unlock,
                        methods=["POST"])

    @server.after_request
    def frame_policy(response: flask.Response) -> flask.Response:
        """Only share pages may be framed elsewhere, and only as their link says."""
        if not flask.request.path.startswith(f"{PREFIX}/"):
            response.headers.setdefault("Content-Security-Policy", OTHERS_POLICY)
        return response


def static_file(name: str) -> flask.Response:
    if name not in STATIC_FILES:
        flask.abort(404)
    path, mimetype = STATIC_FILES[name]
    response = flask.send_file(path, mimetype=mimetype, max_age=3600)
    response.headers["Content-Security-Policy"] = "frame-ancestors *"
    return response


def _share(token: str) -> shares.Share | None:
    return shares.find(get_services().db, token)


def _open(token: str) -> shares.Share | flask.Response:
    """The link's scope, or the answer instead: 404 for no link, 401 for a password
    link not unlocked in this browser."""
    found = _share(token)
    if found is None:
        return _answer(flask.jsonify(error=UNKNOWN), 404, None)
    if found.locked and not _unlocked(token):
        return _answer(flask.jsonify(error="This shared view needs its password."), 401,
                       found)
    return found


def _unlocked(token: str) -> bool:
    return shares.unlocked(get_services().db, token, flask.request.cookies.get(UNLOCK_COOKIE),
                           time.time())


def page(token: str) -> flask.Response:
    found = _share(token)
    params = views.Params.from_args(flask.request.args)
    if found is None:
        return _answer(flask.Response(UNKNOWN + "\n", mimetype="text/plain"), 404, None)
    base = f"{PREFIX}/{token}"
    if found.locked and not _unlocked(token):
        html = password_page(base, params)
    else:
        html = share_page(base, found, params, views.live_pages(found) is not None)
    return _answer(flask.Response(html, mimetype="text/html"), 200, found, page=True)


def data(token: str) -> flask.Response:
    found = _open(token)
    if isinstance(found, flask.Response):
        return found
    return _json(found, lambda db, params: {
        "history": views.history(db, found, params),
        "live": views.live(db, found, params)})


def live_data(token: str) -> flask.Response:
    found = _open(token)
    if isinstance(found, flask.Response):
        return found
    return _json(found, lambda db, params: {"live": views.live(db, found, params)})


def csv(token: str) -> flask.Response:
    found = _open(token)
    if isinstance(found, flask.Response):
        return found
    try:
        text, name = views.history_csv(get_services().db, found,
                                       views.Params.from_args(flask.request.args))
    except (HitboardError, PyMongoError) as exc:
        return _answer(flask.jsonify(error=_said(exc)), 400, found)
    response = flask.Response(text, mimetype="text/csv")
    response.headers["Content-Disposition"] = f'attachment; filename="{_ascii(name)}"'
    return _answer(response, 200, found)


def unlock(token: str) -> flask.Response:
    """``POST {"password": …}`` (JSON, same-origin: ``authority.origin``): the unlock
    cookie, scoped to this link's path. Failures count in the sign-in throttle."""
    found = _share(token)
    if found is None or not found.locked:
        return _answer(flask.jsonify(error=UNKNOWN), 404, None)
    address = client_address()
    wait = throttle().retry_after(address)
    if wait:
        response = _answer(flask.jsonify(error=f"Too many wrong passwords: try again in "
                                               f"{wait} seconds."), 429, found)
        response.headers["Retry-After"] = str(wait)
        return response
    body = flask.request.get_json(silent=True)
    password = body.get("password") if isinstance(body, dict) else None
    db = get_services().db
    if not shares.password_matches(db, token, password):
        throttle().fail(address)
        log.warning("share link %s…: wrong password from %s", found.prefix, address)
        return _answer(flask.jsonify(error="That is not this link's password."), 401, found)
    throttle().forgive(address)
    response = _answer(flask.Response(status=204), 204, found)
    _set_unlock(response, shares.unlock_value(db, token, time.time()), f"{PREFIX}/{token}")
    return response


def _set_unlock(response: flask.Response, value: str, path: str) -> None:
    """Over https the cookie goes into a third-party frame too (``SameSite=None``,
    partitioned by the embedding site); over plain http it cannot (browsers refuse
    ``SameSite=None`` without ``Secure``), so it is ``Lax``: the page opens, an embed
    on another site asks again."""
    if flask.request.is_secure or is_https(get_services().settings):
        response.set_cookie(UNLOCK_COOKIE, value, max_age=shares.UNLOCK_SECONDS, path=path,
                            httponly=True, secure=True, samesite="None", partitioned=True)
    else:
        response.set_cookie(UNLOCK_COOKIE, value, max_age=shares.UNLOCK_SECONDS, path=path,
                            httponly=True, samesite="Lax")


def _json(found: shares.Share, read) -> flask.Response:
    params = views.Params.from_args(flask.request.args)
    try:
        body = read(get_services().db, params)
    except (HitboardError, PyMongoError) as exc:
        return _answer(flask.jsonify(error=_said(exc)), 400, found)
    return _answer(flask.Response(flask.json.dumps(body), mimetype="application/json"), 200,
                   found)


def _said(exc: Exception) -> str:
    return " ".join(str(exc).split())[:300] if isinstance(exc, HitboardError) else \
        "The store cannot be read now."


def _answer(response: flask.Response, status: int, found: shares.Share | None,
            page: bool = False) -> flask.Response:
    """``response`` with the share headers: no caching, no referrer, and the frame
    policy of the link (``'none'`` for no link at all)."""
    response.status_code = status
    response.headers.update(NO_STORE)
    ancestors = "'none'" if found is None else " ".join(found.frame_ancestors) or "*"
    policy = f"frame-ancestors {ancestors}"
    response.headers["Content-Security-Policy"] = f"{PAGE_POLICY}; {policy}" if page \
        else policy
    return response


def _ascii(name: str) -> str:
    return "".join(c if c.isascii() and c.isprintable() and c not in '"\\' else "_"
                   for c in name)
