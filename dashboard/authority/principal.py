"""Who is asking: the :class:`Principal` of the current request and what it may do.

The admin (signed in with the admin secret's cookie, a bearer token, or everyone when
``open_admin`` is on), a user (signed in with a name and password: an admin may do
everything, a viewer reads its sites) and the visitor (anyone else). Every state change
asks :meth:`Principal.can` through :func:`refusal`; every site read asks
:meth:`Principal.sees` (``scope``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import flask
from pymongo.errors import PyMongoError

from queries import accounts, signin_links
from queries.errors import HitboardError

from ..services import get_services
from .keys import KEY_SCHEME, UNCHECKED, api_key
from .sessions import (
    COOKIE,
    SESSION_SECONDS,
    Session,
    check_session,
    check_user_session,
    is_https,
    is_user_session,
    link_code,
    same_secret,
    session_value,
)
from .throttle import FailureThrottle

log = logging.getLogger(__name__)
EXTENSION_KEY = "hitboard.authority"
IDENTITY = "hitboard_identity"              # attributes of the current request
CLEAR_SESSION = "hitboard_clear_session"
USERS_SEEN = "hitboard.authority.users_seen"      # the last answer of users_exist()
NO_SECRET = "start it with `hitboard serve`, or set HITBOARD_ADMIN_TOKEN"

# Every action a principal may be granted, and what it does, for messages.
ACTIONS = {
    "loadgen": "drive the load generator",
    "rollups": "run the rollups now",
    "notes": "add notes",
    "sites": "manage sites",
    "users": "manage users and API keys",
    "shares": "manage share links",
    "notify": "manage notifications",
}


@dataclass(frozen=True)
class Principal:
    name: str
    via: str = ""                       # session, bearer, key, open; "" when not signed in
    grants: frozenset[str] = frozenset()
    sites: frozenset[str] | None = None
    user: bool = False                  # a user of the store (else the admin secret's)

    def sees(self, site: str) -> bool:
        return self.sites is None or site in self.sites

    def can(self, action: str) -> bool:
        if action not in ACTIONS:
            raise KeyError(f"unknown action {action!r}")
        return action in self.grants

    @property
    def signed_in(self) -> bool:
        return self.via in ("session", "bearer")


VISITOR = Principal("visitor")


def admin(via: str) -> Principal:
    return Principal("admin", via, frozenset(ACTIONS))


def user_principal(user: accounts.User) -> Principal:
    """An admin may do every action on every site; a viewer reads its sites."""
    grants = frozenset(ACTIONS) if user.role == "admin" else frozenset()
    return Principal(user.name, "session", grants,
                     None if user.role == "admin" else user.sites, user=True)


@dataclass(frozen=True)
class Refusal:
    """Why an action is refused, as an HTTP status and a sentence."""

    status: int
    reason: str
    retry_after: int = 0


@dataclass(frozen=True)
class _Identity:
    principal: Principal
    failure: str = ""          # "wrong" (a credential given and wrong), "throttled",
    #                            "unchecked" (an API key the store could not be asked about)
    retry_after: int = 0


def throttle(server: flask.Flask | None = None) -> FailureThrottle:
    app = server if server is not None else flask.current_app
    return app.extensions[EXTENSION_KEY]


def secret() -> str | None:
    return get_services().settings.admin_token


def client_address() -> str | None:
    """The client's address (a trusted proxy's X-Forwarded-For: see ``routes``)."""
    return flask.request.remote_addr if flask.has_request_context() else None


def who() -> Principal:
    """The principal of the current request (a visitor outside one)."""
    return _identity().principal


def _identity() -> _Identity:
    """Identified once per request (a failure counts once), kept on the request: not in
    ``flask.g``, which nested request contexts of one app share."""
    if not flask.has_request_context():
        return _Identity(VISITOR)
    found = getattr(flask.request, IDENTITY, None)
    if found is None:
        found = _identify(flask.request)
        setattr(flask.request, IDENTITY, found)
    return found


def bearer_token(request: flask.Request) -> str | None:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


def _identify(request: flask.Request) -> _Identity:
    if get_services().settings.open_admin:
        return _Identity(admin("open"))
    token, cookie = bearer_token(request), request.cookies.get(COOKIE) or None
    if token is None and cookie is not None and is_user_session(cookie):
        return _user_identity(request, cookie)
    expected = secret()
    is_key = token is not None and token.startswith(KEY_SCHEME)
    if (token is None and cookie is None) or not (expected or is_key):
        return _Identity(VISITOR)
    address = client_address()
    wait = throttle().retry_after(address)
    if wait:
        return _Identity(VISITOR, "throttled", wait)
    if is_key:
        found = api_key(request, token)
        if found is UNCHECKED:                  # the store cannot be read: no failure
            return _Identity(VISITOR, "unchecked")
        if found is None:
            return _failed(address, "unknown or revoked API key")
        return _Identity(Principal(found.name, "key", frozenset(),
                                   None if found.sites is None else frozenset(found.sites)))
    if token is not None:
        if same_secret(token, expected):
            return _Identity(admin("bearer"))
        return _failed(address, "wrong admin token")
    state = check_session(cookie, expected)
    if state is Session.VALID:
        return _Identity(admin("session"))
    setattr(request, CLEAR_SESSION, True)         # the browser forgets it (routes.py)
    if state is Session.EXPIRED:
        return _Identity(VISITOR)
    return _failed(address, "session cookie not signed by this server")


def _user_identity(request: flask.Request, cookie: str) -> _Identity:
    """A user's cookie: signed with the store's key, of a user who still exists, and of
    the user's current epoch (else signed out: the browser forgets it)."""
    address = client_address()
    wait = throttle().retry_after(address)
    if wait:
        return _Identity(VISITOR, "throttled", wait)
    db = get_services().db
    try:
        state, name, epoch = check_user_session(cookie, accounts.signing_key(db))
        user = accounts.find_user(db, name) if state is Session.VALID else None
    except (HitboardError, PyMongoError) as exc:
        log.warning("session not checked: %s", exc)
        return _Identity(VISITOR)
    if user is not None and user.epoch == epoch:
        return _Identity(user_principal(user))
    setattr(request, CLEAR_SESSION, True)
    if state is Session.FORGED:
        return _failed(address, "session cookie not signed by this store")
    return _Identity(VISITOR)


def _failed(address: str | None, what: str) -> _Identity:
    throttle().fail(address)
    log.warning("authentication failed from %s: %s", address, what)
    return _Identity(VISITOR, "wrong")


def refusal(action: str, *, page: bool = True) -> Refusal | None:
    """None when the current request may do ``action``, else why not. ``page``: the
    words are for someone in the dashboard (else for a script calling the API)."""
    identity = _identity()
    if identity.principal.can(action):
        return None
    what = ACTIONS[action]
    if identity.failure == "throttled":
        return _throttled(identity.retry_after)
    if identity.failure == "wrong":
        return Refusal(401, "Signing in failed: the admin token is wrong or no longer "
                            "valid (the server may have restarted with a new one).")
    if identity.principal.signed_in:
        return Refusal(403, f"You may not {what}.")
    if not secret() and not users_exist():
        return Refusal(403, f"Nobody may {what} on this server: it has no admin secret "
                            f"({NO_SECRET}).")
    if page:
        return Refusal(401, f"Sign in to {what}: Sign in at the top right of the "
                            "dashboard, or open the link that hitboard serve printed.")
    return Refusal(401, f"To {what}, send the admin token: "
                        "Authorization: Bearer $HITBOARD_ADMIN_TOKEN.")


def users_exist() -> bool:
    """Whether the store holds a user (then every page needs signing in: ``gate``).
    When the store cannot say, the last answer this process had; with none, no: a
    store that answers nothing shows nothing of any site either, and its pages say why."""
    app = flask.current_app
    try:
        found = accounts.any_users(get_services().db)
    except (HitboardError, PyMongoError) as exc:
        log.warning("users not read: %s", exc)
        return app.extensions.get(USERS_SEEN, False)
    app.extensions[USERS_SEEN] = found
    return found


def signin_refusal(token: object) -> Refusal | None:
    """None when ``token`` is this server's admin secret (the address's failures are
    then forgotten), else why signing in fails; a wrong one counts as a failure."""
    expected = secret()
    if not expected:
        return Refusal(403, f"This server has no admin secret to sign in with ({NO_SECRET}).")
    address = client_address()
    wait = throttle().retry_after(address)
    if wait:
        return _throttled(wait)
    if not same_secret(token, expected):
        _failed(address, "wrong sign-in secret")
        return Refusal(401, "That is not this server's admin secret.")
    throttle().forgive(address)
    return None


def typed_refusal(typed: object) -> Refusal | None:
    """None when what was typed in the top bar signs in: a sign-in link pasted whole (its
    code, used now) or the admin secret; else why not."""
    code = link_code(typed)
    return signin_refusal(typed) if code is None else link_refusal(code)


def link_refusal(code: object) -> Refusal | None:
    """None when ``code`` is a sign-in link's code, unused and unexpired (it is used
    now, in whichever server process), else why signing in fails; an unknown, used or
    expired one counts as a failure."""
    if not secret():
        return Refusal(403, f"This server has no admin secret to sign in with ({NO_SECRET}).")
    address = client_address()
    wait = throttle().retry_after(address)
    if wait:
        return _throttled(wait)
    try:
        claimed = signin_links.claim(get_services().db, code)
    except (HitboardError, PyMongoError) as exc:
        log.warning("sign-in link not checked: %s", exc)
        return Refusal(503, "The sign-in link cannot be checked now (the store cannot be "
                            "written): sign in with the admin secret (Sign in, top right).")
    if not claimed:
        _failed(address, "sign-in link unknown, used or expired")
        return Refusal(401, "This sign-in link was used already, has expired (a link "
                            f"lasts {signin_links.LINK_SECONDS // 60} minutes and signs in "
                            "once) or is not this server's: run `hitboard signin-link` for "
                            "a new one.")
    throttle().forgive(address)
    return None


def _throttled(wait: int) -> Refusal:
    minutes = -(-wait // 60)
    return Refusal(429, f"Too many failed sign-ins from your address: try again in "
                        f"{minutes} minute{'s' if minutes != 1 else ''}.", wait)


def write_session(response, value: str | None = None) -> None:
    """Sign the browser in: ``response`` (Flask's, or a Dash callback's) sets the
    cookie (``value``: a user's, else the admin secret's), unreadable by scripts. Lax: a
    link in an email opens signed in; writes need JSON from this origin (``origin``)."""
    response.set_cookie(COOKIE, value or session_value(secret()), max_age=SESSION_SECONDS,
                        path="/", httponly=True, samesite="Lax", secure=_secure())


def erase_session(response) -> None:
    response.set_cookie(COOKIE, "", max_age=0, expires=0, path="/", httponly=True,
                        samesite="Lax", secure=_secure())


def _secure() -> bool:
    return flask.request.is_secure or is_https(get_services().settings)
