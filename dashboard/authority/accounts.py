"""Signing in with a user's name and password: throttled per client address (as the
admin secret is) and per account name, 5 failures in 15 minutes either way, so a
password is not guessed from many addresses either. A name nobody holds fails the
same way, after the same argon2 work."""

from __future__ import annotations

import logging

import flask
from pymongo.errors import PyMongoError

from queries import accounts
from queries.errors import HitboardError

from ..services import get_services
from .principal import Refusal, _throttled, client_address, throttle
from .sessions import user_session_value
from .throttle import FailureThrottle

log = logging.getLogger(__name__)
ACCOUNT_THROTTLE = "hitboard.authority.accounts"
WRONG = "That name and password do not match a user of this server."


def account_throttle(server: flask.Flask | None = None) -> FailureThrottle:
    app = server if server is not None else flask.current_app
    return app.extensions[ACCOUNT_THROTTLE]


def account_key(name: object) -> str:
    """What a name's failures count against (a prefix keeps it apart from addresses)."""
    return "user:" + (name[:64].lower() if isinstance(name, str) else "?")


def password_signin(name: object, password: object) -> tuple[Refusal | None, str | None]:
    """(None, cookie value) when ``password`` is ``name``'s, else (why not, None)."""
    address, key = client_address(), account_key(name)
    wait = max(throttle().retry_after(address), account_throttle().retry_after(key))
    if wait:
        return _throttled(wait), None
    db = get_services().db
    try:
        user = accounts.authenticate(db, name, password)
        signing = accounts.signing_key(db) if user else None
    except (HitboardError, PyMongoError) as exc:
        log.warning("sign-in not checked: %s", exc)
        return Refusal(503, "Signing in cannot be checked now: try again shortly."), None
    if user is None or signing is None:
        throttle().fail(address)
        account_throttle().fail(key)
        log.warning("authentication failed from %s: wrong password for %r", address,
                    str(name)[:64])
        return Refusal(401, WRONG), None
    throttle().forgive(address)
    account_throttle().forgive(key)
    return None, user_session_value(signing, user.name, user.epoch)
