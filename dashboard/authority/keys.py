"""API keys as bearers: ``Authorization: Bearer hbk_…`` is checked as a key (any other
bearer as the admin secret; a wrong one of either counts as a failure). A key's
principal has no grant: it reads the Stats API for its sites, nothing else, and each
request spends one of its hour's ``HOURLY_LIMIT``."""

from __future__ import annotations

import logging

import flask
from pymongo.errors import PyMongoError

from queries.accounts import keys
from queries.accounts.keys import HOURLY_LIMIT, ApiKey
from queries.errors import HitboardError

from ..services import get_services

log = logging.getLogger(__name__)
KEY_SCHEME = keys.SCHEME
UNCHECKED = object()                  # a key the store could not be asked about
API_KEY = "hitboard_api_key"          # the request's key, once checked


def api_key(request: flask.Request, token: str) -> ApiKey | object | None:
    """The key ``token`` is (kept on the request), None, or ``UNCHECKED`` when the store
    cannot be read (no failure is counted: the key may be right)."""
    try:
        found = keys.check(get_services().db, token)
    except (HitboardError, PyMongoError) as exc:
        log.warning("API key not checked: %s", exc)
        return UNCHECKED
    setattr(request, API_KEY, found)
    return found


def spent() -> int:
    """A request of the current key counted: 0 when it may go on, else the seconds
    until it may again (its hour's ``HOURLY_LIMIT`` requests are made). 0 without a
    key."""
    found = getattr(flask.request, API_KEY, None)
    if found is None:
        return 0
    return keys.spend(get_services().db, found)


__all__ = ["HOURLY_LIMIT", "KEY_SCHEME", "UNCHECKED", "api_key", "spent"]
