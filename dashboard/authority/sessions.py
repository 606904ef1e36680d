"""The admin secret and the session cookie a browser signs in with, as Jupyter does it:
``hitboard serve`` makes a secret when none is configured and prints a link that signs
the browser in; the link's route sets the cookie and redirects to a clean URL. The link
carries a one-time code (``queries.signin_links``: used once, within minutes), never the
secret, which a browser would keep in its history; ``hitboard signin-link`` prints another.

The cookie holds when it was issued and an HMAC of that under the secret, so any worker
given the same secret checks it alone, nothing is stored, and a new secret (a restart
without ``HITBOARD_ADMIN_TOKEN``) signs every browser out. No Flask here: the routes
and hooks that read requests are in ``principal`` and ``routes``.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable, Mapping
from enum import Enum
from urllib.parse import parse_qs, quote, urlsplit

from queries.signin_links import LINK_SECONDS

from ..settings import Settings

COOKIE = "hitboard_session"
# The page this browser last showed (path and query, written by assets/hitboard.js): a
# sign-in link opened without ``next`` lands there, not on Live. Never an authority.
HERE_COOKIE = "hitboard_here"
SESSION_SECONDS = 7 * 24 * 3600
SKEW = 300                # a cookie issued up to this far in the future: another worker's clock
SECRET_BYTES = 32
SHORT_SECRET = 16         # characters under which `hitboard serve` warns
SIGNIN_PATH = "/signin"


class Session(Enum):
    VALID = "valid"
    EXPIRED = "expired"     # signed by this secret, too old: no failure, sign in again
    FORGED = "forged"       # not signed by this secret: counted as a failed attempt


def new_secret() -> str:
    return secrets.token_urlsafe(SECRET_BYTES)


def same_secret(given: object, secret: str) -> bool:
    """Constant-time comparison; anything but a non-empty string is wrong."""
    if not isinstance(given, str) or not given:
        return False
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), secret.encode())


def _mac(secret: str, issued: int) -> str:
    return hmac.new(secret.encode(), f"hitboard-session:{issued}".encode(),
                    hashlib.sha256).hexdigest()


def session_value(secret: str, now: float | None = None) -> str:
    issued = int(time.time() if now is None else now)
    return f"{issued}.{_mac(secret, issued)}"


def check_session(value: str, secret: str, now: float | None = None) -> Session:
    issued_text, _, mac = value.partition(".")
    if not (issued_text.isascii() and issued_text.isdigit()) or len(issued_text) > 12:
        return Session.FORGED
    issued = int(issued_text)
    if not hmac.compare_digest(mac.encode("ascii", "replace"), _mac(secret, issued).encode()):
        return Session.FORGED
    now = time.time() if now is None else now
    if not now - SESSION_SECONDS <= issued <= now + SKEW:
        return Session.EXPIRED
    return Session.VALID


def _user_mac(key: str, body: str) -> str:
    return hmac.new(key.encode(), f"hitboard-user-session:{body}".encode(),
                    hashlib.sha256).hexdigest()


def user_session_value(key: str, name: str, epoch: int, now: float | None = None) -> str:
    """A user's cookie: ``u.ISSUED.EPOCH.NAME.MAC``, signed with the store's key."""
    body = f"u.{int(time.time() if now is None else now)}.{int(epoch)}.{name}"
    return f"{body}.{_user_mac(key, body)}"


def is_user_session(value: str) -> bool:
    return value.startswith("u.")


def check_user_session(value: str, key: str | None, now: float | None = None
                       ) -> tuple[Session, str, int]:
    """(state, user name, epoch) of a user's cookie; the epoch is the caller's to check
    against the user's own."""
    body, _, mac = value.rpartition(".")
    parts = body.split(".", 3)
    if key is None or len(parts) != 4 or not all(p.isascii() and p.isdigit() and len(p) < 13
                                                 for p in parts[1:3]):
        return Session.FORGED, "", 0
    if not hmac.compare_digest(mac.encode("ascii", "replace"), _user_mac(key, body).encode()):
        return Session.FORGED, "", 0
    issued, epoch, name = int(parts[1]), int(parts[2]), parts[3]
    now = time.time() if now is None else now
    if not now - SESSION_SECONDS <= issued <= now + SKEW:
        return Session.EXPIRED, name, epoch
    return Session.VALID, name, epoch


def base_url(settings: Mapping) -> str:
    """Where people reach the server: ``public_url``, else the address it listens on
    (a wildcard address named by its loopback)."""
    if settings.get("public_url"):
        return settings["public_url"]
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(settings["host"],
                                                                        settings["host"])
    return f"http://{f'[{host}]' if ':' in host else host}:{settings['port']}"


def signin_link(settings: Mapping, code: str) -> str:
    return f"{base_url(settings)}{SIGNIN_PATH}?code={quote(code, safe='')}"


def link_code(typed: object) -> str | None:
    """The one-time code of a sign-in link pasted whole (``…/signin?code=…``) into the top
    bar's Sign in, else None (the text is then read as the admin secret)."""
    if not isinstance(typed, str) or "code=" not in typed:
        return None
    parts = urlsplit(typed.strip())
    if not parts.path.endswith(SIGNIN_PATH):
        return None
    codes = parse_qs(parts.query).get("code")
    return codes[0] if codes else None


def is_https(settings: Mapping) -> bool:
    return urlsplit(settings.get("public_url") or "").scheme == "https"


def secret_at_start(settings: Settings, link: Callable[[Settings], str]
                    ) -> tuple[Settings, list[str]]:
    """What ``hitboard serve`` starts with, before its workers fork: the settings with an
    admin secret made when none is configured (every worker inherits the same), and the
    lines to print about signing in (``link``: a fresh sign-in link)."""
    values = dict(settings)
    if values["readonly"]:
        return settings, []
    if values["open_admin"]:
        return settings, ["WARNING: HITBOARD_OPEN_ADMIN is on: anyone who can reach this "
                        "server can start the load generator, run rollups and add notes."]
    if values["admin_token"]:
        lines = [f"State changes need the admin token: sign in at {base_url(values)}/ "
                 "(Sign in, top right) with HITBOARD_ADMIN_TOKEN."]
        if len(values["admin_token"]) < SHORT_SECRET:
            lines.append(f"WARNING: HITBOARD_ADMIN_TOKEN is shorter than {SHORT_SECRET} "
                         "characters: anyone may guess it. Make it long and random.")
        return settings, lines
    values["admin_token"] = new_secret()
    return Settings(values), [
        "To change state (load generator, rollups, notes, sites), sign in with this link "
        f"(once, within {LINK_SECONDS // 60} minutes; `hitboard signin-link` prints "
        "another):\n    "
        f"{link(Settings(values))}"]
