"""Users: a name, a role (``admin`` may do everything, ``viewer`` reads and changes
nothing), the sites a viewer reads (None: all), an argon2id hash and a session epoch.

The epoch is part of every session cookie the user holds: bumping it (a new password,
new grants, removal, "Sign out everywhere") makes all of them invalid at once, in every
worker, since each request reads the user anyway.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass

from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError

from queries import validation
from queries.errors import HitboardError

from . import passwords
from .signing import signing_key

COLLECTION = "accounts.users"
ROLES = ("admin", "viewer")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@+-]{0,63}")
MAX_SITES = 1000


class UserError(HitboardError):
    """A user name taken or unknown, a role unknown, a password refused."""


@dataclass(frozen=True)
class User:
    name: str
    role: str
    sites: frozenset[str] | None      # None: every site
    epoch: int = 0
    created: dt.datetime | None = None

    @classmethod
    def from_doc(cls, doc: dict) -> User:
        sites = doc.get("sites")
        return cls(doc["_id"], doc["role"], None if sites is None else frozenset(sites),
                   int(doc.get("epoch", 0)), doc.get("created"))


def check_name(name: object) -> str:
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise UserError("a user name is 1 to 64 letters, digits and _ . @ + - "
                        "(starting with a letter or digit)")
    return name


def check_role(role: object) -> str:
    if role not in ROLES:
        raise UserError(f"unknown role {str(role)[:40]!r}: one of {', '.join(ROLES)}")
    return role


def check_sites(sites: Iterable[str] | None) -> list[str] | None:
    """None or empty: every site; else the names, checked as site names."""
    if sites is None:
        return None
    names = sorted({validation.site(site) for site in sites})
    if len(names) > MAX_SITES:
        raise UserError(f"a user reads at most {MAX_SITES} named sites")
    return names or None


def any_users(db) -> bool:
    return db[COLLECTION].find_one({}, {"_id": 1}) is not None


def find_user(db, name: object) -> User | None:
    if not isinstance(name, str) or not NAME.fullmatch(name):
        return None
    doc = db[COLLECTION].find_one({"_id": name}, {"hash": 0})
    return User.from_doc(doc) if doc else None


def list_users(db) -> list[User]:
    return [User.from_doc(doc) for doc in db[COLLECTION].find({}, {"hash": 0}).sort("_id", 1)]


def add_user(db, name: str, role: str, password: str, sites: Iterable[str] | None = None,
             now: dt.datetime | None = None) -> User:
    """A new user; the store's signing key is made with the first one."""
    doc = {"_id": check_name(name), "role": check_role(role), "sites": check_sites(sites),
           "hash": passwords.hash_password(password), "epoch": 0,
           "created": now or dt.datetime.now(dt.UTC)}
    signing_key(db, create=True)
    try:
        db[COLLECTION].insert_one(doc)
    except DuplicateKeyError:
        raise UserError(f"a user named {name} exists already") from None
    return User.from_doc(doc)


def set_user(db, name: str, role: str | None = None, sites: Iterable[str] | None = None,
             all_sites: bool = False) -> User:
    """Change a user's role and sites (``sites`` replaces them; ``all_sites``: every
    site); its sessions end."""
    if sites is not None and all_sites:
        raise UserError("give sites or --all-sites, not both")
    changes: dict = {}
    if role is not None:
        changes["role"] = check_role(role)
    if all_sites:
        changes["sites"] = None
    elif sites is not None:
        changes["sites"] = check_sites(sites)
    return _update(db, name, {"$set": changes, "$inc": {"epoch": 1}})


def set_password(db, name: str, password: str) -> User:
    """A new password; the user's sessions end."""
    return _update(db, name, {"$set": {"hash": passwords.hash_password(password)},
                              "$inc": {"epoch": 1}})


def bump_epoch(db, name: str) -> User:
    """Sign the user out everywhere."""
    return _update(db, name, {"$inc": {"epoch": 1}})


def remove_user(db, name: str) -> None:
    if db[COLLECTION].delete_one({"_id": check_name(name)}).deleted_count != 1:
        raise UserError(f"no user named {name}")


def authenticate(db, name: object, password: object) -> User | None:
    """The user when ``password`` is theirs, else None; an unknown name takes as long."""
    known = isinstance(name, str) and NAME.fullmatch(name) is not None
    doc = db[COLLECTION].find_one({"_id": name}) if known else None
    if not passwords.verify(doc["hash"] if doc else None, password) or doc is None:
        return None
    return User.from_doc(doc)


def _update(db, name: str, change: dict) -> User:
    if not change.get("$set"):
        change.pop("$set", None)
    doc = db[COLLECTION].find_one_and_update({"_id": check_name(name)}, change,
                                             projection={"hash": 0},
                                             return_document=ReturnDocument.AFTER)
    if doc is None:
        raise UserError(f"no user named {name}")
    return User.from_doc(doc)
