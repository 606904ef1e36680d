"""The two ways a delivery goes out: an email over SMTP, a webhook's signed JSON POST.

Addresses and URLs are checked here, once, for the CLI, the site page and the settings
alike. A send that fails raises :class:`ChannelError` (the deliveries log it and retry);
nothing here touches the store.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import smtplib
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass
from email.message import EmailMessage
from urllib.parse import unquote, urlsplit

from ..errors import HitboardError

TIMEOUT = 10.0              # seconds, per SMTP command and per webhook request
SMTP_SCHEMES = {"smtp": 25, "smtps": 465}
SIGNATURE = "X-Hitboard-Signature"
MAX_URL = 2000
_ADDRESS = re.compile(r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}"
                      r"@(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                      r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+")


class InvalidTargetError(HitboardError):
    """An address or URL a notification cannot go to."""


class ChannelError(Exception):
    """A send that did not go through (refused, unreachable, an HTTP error): retried."""


def check_address(text) -> str:
    """One email address, ``name@example.com``: no display name, no list, no CR/LF."""
    value = str(text).strip()
    if not _ADDRESS.fullmatch(value) or ".." in value:
        raise InvalidTargetError(f"{str(text)[:100]!r} is not one email address "
                                 "(write name@example.com, one per subscription)")
    return value


def check_url(text) -> str:
    """An http(s) URL with a host, as a webhook's."""
    value = str(text).strip()
    parts = urlsplit(value)
    if (parts.scheme not in ("http", "https") or not parts.hostname or len(value) > MAX_URL
            or any(c.isspace() or ord(c) < 32 for c in value)):
        raise InvalidTargetError(f"{str(text)[:100]!r} is not an http(s) URL")
    try:
        parts.port  # noqa: B018 -- raises ValueError on a port out of range
    except ValueError:
        raise InvalidTargetError(f"{value[:100]!r} has a bad port") from None
    return value


def channel_of(to: str) -> tuple[str, str]:
    """(``email`` | ``webhook``, the checked target) of an address or a URL."""
    if "://" in str(to):
        return "webhook", check_url(to)
    return "email", check_address(to)


@dataclass(frozen=True)
class SmtpServer:
    host: str
    port: int
    user: str | None
    password: str | None
    tls: bool               # smtps: TLS from the start; else STARTTLS when offered


def smtp_server(url: str) -> SmtpServer:
    """``smtp://[user:pass@]host[:port]`` or ``smtps://...``; ValueError otherwise."""
    parts = urlsplit(url)
    if parts.scheme not in SMTP_SCHEMES or not parts.hostname:
        raise ValueError(f"expected smtp://[user:pass@]host[:port] or smtps://..., got "
                         f"{parts.scheme or url[:30]!r}")
    return SmtpServer(parts.hostname, parts.port or SMTP_SCHEMES[parts.scheme],
                      unquote(parts.username) if parts.username else None,
                      unquote(parts.password) if parts.password else None,
                      parts.scheme == "smtps")


def send_email(url: str, message: EmailMessage) -> None:
    """Send ``message`` through the server of ``url``: STARTTLS when it is offered, and
    required before credentials go out."""
    server = smtp_server(url)
    try:
        client = (smtplib.SMTP_SSL(server.host, server.port, timeout=TIMEOUT,
                                   context=ssl.create_default_context()) if server.tls
                  else smtplib.SMTP(server.host, server.port, timeout=TIMEOUT))
        with client:
            if not server.tls:
                client.ehlo()
                if client.has_extn("starttls"):
                    client.starttls(context=ssl.create_default_context())
                    client.ehlo()
                elif server.user:
                    raise ChannelError("the SMTP server does not offer STARTTLS: "
                                       "credentials are never sent in clear")
            if server.user:
                client.login(server.user, server.password or "")
            client.send_message(message)
    except (smtplib.SMTPException, OSError) as exc:
        raise ChannelError(f"SMTP: {type(exc).__name__}: {exc}"[:300]) from None


def signature(secret: str, body: bytes) -> str:
    """``sha256=<hex HMAC of body>``, the value of :data:`SIGNATURE`."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None             # a 3xx is then an HTTPError: redirects are not followed


def post_json(url: str, body: bytes, secret: str | None) -> int:
    """POST ``body`` (JSON) to ``url``, signed with ``secret``; the status (2xx)."""
    headers = {"Content-Type": "application/json", "User-Agent": "hitboard-notify"}
    if secret:
        headers[SIGNATURE] = signature(secret, body)
    request = urllib.request.Request(check_url(url), data=body, headers=headers,
                                     method="POST")
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=TIMEOUT) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        raise ChannelError(f"webhook answered HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise ChannelError(f"webhook: {type(exc).__name__}: {exc}"[:300]) from None
