"""Share links: a token that shows one site read-only (History and Live, locked to a
filter) to whoever holds it, in a page or an ``<iframe>``.

A link is stored as its token's SHA-256 (reading the store gives no working link) with
the scope it grants: the site, the filter (``DIM:VALUE``, as ``report --filter``), the
origins allowed to frame it and, for a password link, the password's scrypt hash and a
random key that signs the unlock cookie (so revoking the link or removing the document
ends every unlocked browser). ``prefix`` (the token's first characters) names a link in
``share list`` and ``share revoke`` without being one.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

from .dimensions.encoding import MAX_VALUE, dimension
from .errors import HitboardError
from .stats.catalog import list_sites
from .stats.sites import registered_sites

COLLECTION = "shares"
TOKEN_BYTES = 24
PREFIX_CHARS = 8
MAX_TOKEN = 100              # characters: anything longer is no token of ours
MIN_PASSWORD, MAX_PASSWORD = 10, 1024
UNLOCK_SECONDS = 7 * 24 * 3600
MAX_ANCESTORS = 20
# An origin a share page may be framed by: scheme, host, optional port; nothing that
# could end the header value or add a directive.
ORIGIN = re.compile(r"https?://(\*\.)?[a-z0-9.-]{1,253}(:\d{1,5})?")
TOKEN = re.compile(rf"[A-Za-z0-9_-]{{1,{MAX_TOKEN}}}")
SCRYPT = {"n": 2**14, "r": 8, "p": 1, "maxmem": 64 * 1024 * 1024, "dklen": 32}


class ShareError(HitboardError):
    """A share link asked for with a bad site, filter, password or origin."""


@dataclass(frozen=True)
class Share:
    """What a link grants: ``site`` alone, under ``filter`` when one is set."""

    prefix: str
    site: str
    filter: tuple[str, str] | None = None
    frame_ancestors: tuple[str, ...] = ()      # empty: any origin may frame it
    locked: bool = False                       # a password link
    created: dt.datetime | None = None

    @property
    def filter_text(self) -> str:
        return "" if self.filter is None else f"{self.filter[0]}:{self.filter[1]}"


def check_filter(text: str | None) -> tuple[str, str] | None:
    """``DIM:VALUE`` (the value may hold colons) as a pair, checked; None for none."""
    if text is None or text == "":
        return None
    by, _, value = text.partition(":")
    dimension(by)
    if not value or len(value) > MAX_VALUE:
        raise ShareError(f"a filter is DIM:VALUE, with a value of 1 to {MAX_VALUE} "
                         "characters, e.g. referrer:news.example")
    return by, value


def check_origin(text: str) -> str:
    origin = str(text).strip().lower().rstrip("/")
    if not ORIGIN.fullmatch(origin):
        raise ShareError(f"not an origin: {str(text)[:100]!r} (scheme://host[:port], "
                         "e.g. https://blog.example.com)")
    return origin


def check_password(password: str) -> str:
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise ShareError(f"a password has {MIN_PASSWORD} to {MAX_PASSWORD:,} characters")
    return password


def known_site(db, site: str) -> str:
    """``site`` when the store counts it (statistics or the registry), else an error."""
    if site in list_sites(db) or site in {s.name for s in registered_sites(db)}:
        return site
    raise ShareError(f"unknown site {str(site)[:100]!r}: see hitboard site list")


def create(db, site: str, filter: str | None = None, password: str | None = None,
           frame_ancestors: tuple[str, ...] = (), now: dt.datetime | None = None
           ) -> tuple[str, Share]:
    """A new link's token (shown once) and what it grants; nothing is written when an
    argument is refused."""
    site = known_site(db, site)
    pair = check_filter(filter)
    origins = tuple(dict.fromkeys(check_origin(o) for o in frame_ancestors))
    if len(origins) > MAX_ANCESTORS:
        raise ShareError(f"at most {MAX_ANCESTORS} origins may frame a share link")
    doc = {"site": site, "filter": list(pair) if pair else None,
           "frame_ancestors": list(origins), "created": now or dt.datetime.now(dt.UTC)}
    if password is not None:
        salt = secrets.token_bytes(16)
        doc.update(salt=salt.hex(), password=_scrypt(check_password(password), salt),
                   key=secrets.token_hex(32))
    token = "-"
    while token.startswith("-"):        # a prefix never reads as an option: `share revoke`
        token = secrets.token_urlsafe(TOKEN_BYTES)
    doc.update(_id=digest(token), prefix=token[:PREFIX_CHARS])
    db[COLLECTION].insert_one(doc)
    return token, _share(doc)


def find(db, token: object) -> Share | None:
    """The link ``token`` opens, or None (unknown, revoked, or no token at all)."""
    doc = _doc(db, token)
    return None if doc is None else _share(doc)


def listed(db) -> list[Share]:
    return [_share(doc) for doc in db[COLLECTION].find({}).sort("created", 1)]


def revoke(db, prefix: str) -> int:
    """Remove the links whose token begins with ``prefix`` (at least ``PREFIX_CHARS``
    characters: one link, never a guess at many); how many."""
    if not isinstance(prefix, str) or len(prefix) < PREFIX_CHARS:
        raise ShareError(f"name a link by its first {PREFIX_CHARS} characters (share list)")
    return db[COLLECTION].delete_many({"prefix": prefix[:PREFIX_CHARS]}).deleted_count


def password_matches(db, token: object, password: object) -> bool:
    doc = _doc(db, token)
    if doc is None or "password" not in doc or not isinstance(password, str):
        return False
    if not 0 < len(password) <= MAX_PASSWORD:
        return False
    given = _scrypt(password, bytes.fromhex(doc["salt"]))
    return hmac.compare_digest(given, doc["password"])


def unlock_value(db, token: object, now: float) -> str | None:
    """The cookie that proves a password was given for ``token`` (None: no such link)."""
    doc = _doc(db, token)
    if doc is None or "key" not in doc:
        return None
    issued = int(now)
    return f"{issued}.{_mac(doc['key'], issued)}"


def unlocked(db, token: object, cookie: object, now: float) -> bool:
    """Whether ``cookie`` is an unlock cookie of ``token`` issued within the last
    ``UNLOCK_SECONDS``."""
    doc = _doc(db, token)
    if doc is None or "key" not in doc or not isinstance(cookie, str):
        return False
    issued_text, _, mac = cookie.partition(".")
    if not (issued_text.isascii() and issued_text.isdigit()) or len(issued_text) > 12:
        return False
    issued = int(issued_text)
    if not hmac.compare_digest(mac.encode("ascii", "replace"),
                               _mac(doc["key"], issued).encode()):
        return False
    return now - UNLOCK_SECONDS <= issued <= now + 300


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def _doc(db, token: object) -> dict | None:
    if not isinstance(token, str) or not TOKEN.fullmatch(token):
        return None
    return db[COLLECTION].find_one({"_id": digest(token)})


def _share(doc: dict) -> Share:
    pair = doc.get("filter")
    return Share(prefix=doc["prefix"], site=doc["site"],
                 filter=tuple(pair) if pair else None,
                 frame_ancestors=tuple(doc.get("frame_ancestors") or ()),
                 locked="password" in doc, created=doc.get("created"))


def _scrypt(password: str, salt: bytes) -> str:
    return hashlib.scrypt(password.encode("utf-8", "surrogatepass"), salt=salt,
                          **SCRYPT).hex()


def _mac(key: str, issued: int) -> str:
    return hmac.new(bytes.fromhex(key), f"hitboard-share:{issued}".encode(),
                    hashlib.sha256).hexdigest()
