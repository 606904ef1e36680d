"""API keys: a script's credential for the Stats API, scoped to sites.

A key is ``hbk_`` and 32 random bytes (URL-safe base64). The store keeps its SHA-256
and a lookup prefix (its first ``PREFIX`` characters after ``hbk_``), never the key: a
copy of the store lets nobody in. A key is shown once, when it is made. Each key may
make ``HOURLY_LIMIT`` requests per UTC hour, counted in the store (``api_key_usage``),
so every server process and worker shares one count.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
from dataclasses import dataclass

from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError

from .. import validation
from ..errors import HitboardError

COLLECTION = "api_keys"
USAGE = "api_key_usage"
SCHEME = "hbk_"
KEY_BYTES = 32
PREFIX = 8
MAX_KEY = 100                 # characters: anything longer is no key of ours
MAX_NAME = 64
HOURLY_LIMIT = 600


@dataclass(frozen=True)
class ApiKey:
    """A key as listed: never the key itself. ``sites``: None, every site."""

    name: str
    prefix: str
    sites: tuple[str, ...] | None
    created: dt.datetime
    last_used: dt.datetime | None = None

    def sees(self, site: str) -> bool:
        return self.sites is None or site in self.sites


def check_name(name: object) -> str:
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME \
            or not name.isprintable():
        raise HitboardError(f"a key's name is 1 to {MAX_NAME} printable characters")
    return name.strip()


def create(db, name: str, sites: tuple[str, ...] | list[str] = (),
           now: dt.datetime | None = None) -> str:
    """A new key named ``name`` reading ``sites`` (none: every site); the key, which
    only its holder will ever see again."""
    name = check_name(name)
    scoped = sorted({validation.site(s) for s in sites}) or None
    keys = db[COLLECTION]
    keys.create_index("name", unique=True)
    if keys.find_one({"name": name}, {"_id": 1}) is not None:
        raise HitboardError(f"a key named {name!r} exists already: revoke it, or choose "
                            "another name")
    while True:
        key = SCHEME + secrets.token_urlsafe(KEY_BYTES)
        try:
            keys.insert_one({"_id": key[len(SCHEME):len(SCHEME) + PREFIX], "name": name,
                             "digest": _digest(key), "sites": scoped,
                             "created": now or dt.datetime.now(dt.UTC), "last_used": None})
            return key
        except DuplicateKeyError:
            if keys.find_one({"name": name}, {"_id": 1}) is not None:
                raise HitboardError(f"a key named {name!r} exists already") from None
            # two keys drew the same prefix (1 in 2^48): draw again


def listed(db) -> list[ApiKey]:
    """Every key, by name."""
    return [_key(doc) for doc in db[COLLECTION].find({}, sort=[("name", 1)])]


def revoke(db, name: str) -> bool:
    """Whether a key named ``name`` was there; it signs in no more."""
    found = db[COLLECTION].find_one({"name": name}, {"_id": 1})
    if found is None or not db[COLLECTION].delete_one({"_id": found["_id"]}).deleted_count:
        return False
    db[USAGE].delete_many({"key": found["_id"]})
    return True


def check(db, token: object) -> ApiKey | None:
    """The key ``token`` is, or None (unknown, revoked, malformed)."""
    if not isinstance(token, str) or not token.startswith(SCHEME) or len(token) > MAX_KEY:
        return None
    prefix = token[len(SCHEME):len(SCHEME) + PREFIX]
    doc = db[COLLECTION].find_one({"_id": prefix})
    if doc is None or not hmac.compare_digest(doc["digest"], _digest(token)):
        return None
    return _key(doc)


def spend(db, key: ApiKey, now: dt.datetime | None = None, limit: int | None = None) -> int:
    """One request of ``key`` counted (and its last use noted): 0 when it may go on,
    else the seconds until its hour ends and it may again."""
    now = now or dt.datetime.now(dt.UTC)
    hour = now.replace(minute=0, second=0, microsecond=0)
    usage = db[USAGE]
    found = usage.find_one_and_update({"_id": f"{key.prefix}/{hour:%Y%m%d%H}"},
                                      {"$inc": {"n": 1}, "$set": {"key": key.prefix,
                                                                  "hour": hour}},
                                      upsert=True,
                                      return_document=ReturnDocument.AFTER)
    if found["n"] > (limit or HOURLY_LIMIT):
        return max(1, int((hour + dt.timedelta(hours=1) - now).total_seconds()))
    if found["n"] == 1:          # the hour's first request: the past hours go
        usage.delete_many({"key": key.prefix, "hour": {"$lt": hour}})
    db[COLLECTION].update_one({"_id": key.prefix}, {"$set": {"last_used": now}})
    return 0


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _key(doc: dict) -> ApiKey:
    sites = doc.get("sites")
    return ApiKey(doc["name"], doc["_id"], tuple(sites) if sites else None,
                  _aware(doc["created"]), _aware(doc.get("last_used")))


def _aware(when: dt.datetime | None) -> dt.datetime | None:
    if when is not None and when.tzinfo is None:
        return when.replace(tzinfo=dt.UTC)
    return when
