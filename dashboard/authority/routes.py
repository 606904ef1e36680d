"""The authority extension: the sign-in page and the sign-in link's route, the
no-cross-site-writes rule and the gate (once a user exists) on every request, the
failure throttles, and which forwarded headers to believe."""

from __future__ import annotations

import logging
import re
from urllib.parse import unquote

import flask
from werkzeug.middleware.proxy_fix import ProxyFix

from ..services import Services
from .accounts import ACCOUNT_THROTTLE
from .gate import gate_refusal
from .origin import write_refusal
from .principal import (
    CLEAR_SESSION,
    EXTENSION_KEY,
    erase_session,
    link_refusal,
    write_session,
)
from .scope import install_scope
from .sessions import COOKIE, HERE_COOKIE, SIGNIN_PATH
from .signin_page import signin_page, signin_post
from .throttle import FailureThrottle

log = logging.getLogger(__name__)
LOCAL_PATH = re.compile(r"/(?![/\\])[\w/.~%?&=+,:;@!$'()*-]*")
MAX_PATH = 2_000
NO_STORE = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}


def register_authority(server: flask.Flask, services: Services) -> None:
    settings = services.settings
    server.extensions[EXTENSION_KEY] = FailureThrottle()
    server.extensions[ACCOUNT_THROTTLE] = FailureThrottle()
    install_scope(server)
    if settings.trusted_proxies:
        n = settings.trusted_proxies
        server.wsgi_app = ProxyFix(server.wsgi_app, x_for=n, x_proto=n, x_host=n, x_port=n)

    @server.before_request
    def refuse_cross_site_writes():
        refused = write_refusal(flask.request, settings.public_url)
        if refused is None:
            return None
        status, reason = refused
        log.warning("%s %s refused from %s: %s", flask.request.method, flask.request.path,
                    flask.request.remote_addr, reason)
        response = flask.jsonify(error=reason)
        response.status_code = status
        return response

    server.before_request(lambda: gate_refusal(flask.request))

    @server.after_request
    def forget_bad_session(response: flask.Response) -> flask.Response:
        if getattr(flask.request, CLEAR_SESSION, False) and not _sets_cookie(response):
            erase_session(response)
        return response

    server.add_url_rule(SIGNIN_PATH, "hitboard_signin", signin, methods=["GET"])
    server.add_url_rule(SIGNIN_PATH, "hitboard_signin_post", lambda: signin_post(_local),
                        methods=["POST"])


def signin() -> flask.Response:
    """``/signin?code=CODE[&next=/path]``: the link ``hitboard serve`` and ``hitboard
    signin-link`` print, good once within minutes (without a code: the sign-in page).
    Sets the session cookie and redirects to a URL without the code: ``next``, else the
    page this browser last showed (``HERE_COOKIE``), a path of this server either way.
    The secret itself never goes in a URL: a ``token`` is refused before it is looked
    at."""
    if "token" in flask.request.args:
        return _text(400, "Sign-in links carry a one-time code, not the admin secret (a "
                          "browser keeps URLs): run `hitboard signin-link` for one, or "
                          "use Sign in at the top right of any page.")
    code = flask.request.args.get("code")
    if code is None:
        return signin_page()
    refused = link_refusal(code)
    if refused is not None:
        response = _text(refused.status, refused.reason)
        if refused.retry_after:
            response.headers["Retry-After"] = str(refused.retry_after)
        return response
    target = flask.request.args.get("next")
    if target is None:
        target = unquote(flask.request.cookies.get(HERE_COOKIE, ""))
    response = flask.redirect(_local(target), code=303)
    response.headers.update(NO_STORE)
    write_session(response)
    return response


def _local(path: str | None) -> str:
    """``path`` when it is a path of this server, else the home page (no open redirect:
    browsers read ``/\\x`` and ``/<tab>/x`` as ``//x``, another host); never the sign-in
    route itself."""
    if not path or len(path) > MAX_PATH or not LOCAL_PATH.fullmatch(path):
        return "/"
    return "/" if path.split("?")[0].rstrip("/") == SIGNIN_PATH else path


def _sets_cookie(response: flask.Response) -> bool:
    return any(value.startswith(f"{COOKIE}=") for value in response.headers.getlist("Set-Cookie"))


def _text(status: int, text: str) -> flask.Response:
    response = flask.Response(text + "\n", status=status, mimetype="text/plain")
    response.headers.update(NO_STORE)
    return response
