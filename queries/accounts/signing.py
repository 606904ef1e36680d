"""The key session cookies of users are signed with: made once, with the first user, and
kept in the store, so a cookie holds across restarts, in every worker and on a
``--readonly`` server (which only reads it)."""

from __future__ import annotations

import contextlib
import secrets

from pymongo.errors import DuplicateKeyError

COLLECTION = "accounts.settings"
KEY_ID = "session_key"
KEY_BYTES = 32


def signing_key(db, create: bool = False) -> str | None:
    """The store's signing key; made now when ``create`` and there is none yet (two
    processes making it at once agree on the first one written)."""
    found = db[COLLECTION].find_one({"_id": KEY_ID})
    if found is not None or not create:
        return found["key"] if found else None
    with contextlib.suppress(DuplicateKeyError):
        db[COLLECTION].insert_one({"_id": KEY_ID, "key": secrets.token_hex(KEY_BYTES)})
    return db[COLLECTION].find_one({"_id": KEY_ID})["key"]
