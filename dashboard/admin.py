"""The admin token: with ``HITBOARD_ADMIN_TOKEN`` set, the pages' actions that write on
demand (the load generator's commands, backfill included, and the Rollups page's "run
now") need it; reading the dashboard and the ``/hit`` beacon never do.

The viewer types the token into the page (kept in the browser tab's session storage) and
each action's callback sends it along; the check happens here, on the server.
"""

from __future__ import annotations

import hmac
import logging

import flask

from queries.errors import HitboardError

from .services import get_services

log = logging.getLogger(__name__)


class AdminTokenError(HitboardError):
    """The action needs this server's admin token and was not given it."""


def token_required() -> bool:
    """Whether the current app asks for the admin token."""
    return bool(get_services().settings.admin_token)


def check_token(given, action: str) -> None:
    """Refuse ``action`` (e.g. "Load generation") unless ``given`` is the current app's
    admin token or none is set. Compared in constant time; the token is never logged."""
    expected = get_services().settings.admin_token
    if not expected:
        return
    if not isinstance(given, str) or not given:   # a crafted request may send anything
        raise AdminTokenError(f"{action} needs this server's admin token "
                              "(HITBOARD_ADMIN_TOKEN): enter it in the Admin token field.")
    if not hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode()):
        log.warning("%s refused: wrong admin token from %s", action,
                    flask.request.remote_addr if flask.has_request_context() else "?")
        raise AdminTokenError(f"{action} refused: the admin token is wrong.")
