"""One-time sign-in codes: what the link ``hitboard serve`` and ``hitboard signin-link``
print carries instead of the admin secret, so that a browser's history, session and
favicon databases keep nothing that signs in again.

A code is stored as its SHA-256 (reading the store gives no working link) with its
expiry, in ``signin_links``; signing in deletes it, and a delete is atomic on every
backend, so however many server processes share the store a code signs in once.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets

COLLECTION = "signin_links"
LINK_SECONDS = 600
CODE_BYTES = 32
MAX_CODE = 100          # characters: anything longer is no code of ours


def issue(db, now: dt.datetime | None = None, seconds: int = LINK_SECONDS) -> str:
    """A new code, valid for ``seconds``; codes past their expiry are removed."""
    now = now or dt.datetime.now(dt.UTC)
    code = secrets.token_urlsafe(CODE_BYTES)
    links = db[COLLECTION]
    links.delete_many({"expires": {"$lte": now}})
    links.insert_one({"_id": _digest(code), "expires": now + dt.timedelta(seconds=seconds)})
    return code


def claim(db, code: object, now: dt.datetime | None = None) -> bool:
    """Whether ``code`` is a code not yet used nor expired; it is used from now on."""
    if not isinstance(code, str) or not code or len(code) > MAX_CODE:
        return False
    now = now or dt.datetime.now(dt.UTC)
    found = db[COLLECTION].delete_one({"_id": _digest(code), "expires": {"$gt": now}})
    return found.deleted_count == 1


def _digest(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()
