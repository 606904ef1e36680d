"""Checks on every value that reaches the store. Site and page names are stored as
values, never as field names, so a page may hold ``.`` or ``$``; only what could corrupt
a document or an ``_id`` is refused."""

from __future__ import annotations

import datetime as dt
import re
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .errors import (
    InvalidPageError,
    InvalidRangeError,
    InvalidSiteError,
    InvalidTimeZoneError,
    NaiveTimestampError,
)

SITE_RE = re.compile(r"[A-Za-z0-9._-]{1,64}")
# A site a stranger's browser may name for the first time (``/hit``): no ``.``, ``..``
# or ``-`` alone, a letter or digit at both ends (the CLI's ``--site`` keeps SITE_RE).
NEW_SITE_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9])?")
MAX_PAGE = 2048
MAX_VALUE = 200
# What no stored text may hold: control characters, C0 (tab, newline... included), DEL
# and C1 (U+0080-U+009F: U+009B begins a terminal's control sequence, as ESC [ does);
# the bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069), which make a
# name read in another order than it is written; and the lone surrogates no database
# can encode as UTF-8.
CONTROLS = "\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
_UNSTORABLE = re.compile(f"[{CONTROLS}\ud800-\udfff]")
_CONTROL = re.compile(f"[{CONTROLS}]")
_ESCAPES = re.compile(r"(?:%[0-9A-Fa-f]{2})+")
# What a decoded run must not hold, so it stays escaped: controls (C0, DEL, C1), "/",
# the bidirectional overrides and isolates, U+FFFD, and the lone surrogates that stand
# for bytes that are not UTF-8 (``surrogateescape``).
_KEPT = re.compile(f"[{CONTROLS}/\ufffd\udc80-\udcff]")
WHOLE_SITE = "*"
MAX_MINUTE_SPAN = dt.timedelta(days=400)


def has_control(value: str) -> bool:
    """Whether ``value`` holds a control character (C0, DEL, C1) or a bidirectional
    override or isolate."""
    return _CONTROL.search(value) is not None


def site(value) -> str:
    if not isinstance(value, str) or not SITE_RE.fullmatch(value):
        raise InvalidSiteError(
            f"invalid site {value!r}: use 1 to 64 letters, digits, '.', '_' or '-'"
        )
    return value


def page(value) -> str:
    """A page path; ``*`` means the whole site. A path without a leading ``/`` gets one,
    so ``index.html`` and ``/index.html`` count as the same page."""
    if not isinstance(value, str) or not value:
        raise InvalidPageError(f"invalid page {value!r}: a page is a non-empty path")
    if len(value) > MAX_PAGE:
        raise InvalidPageError(f"invalid page: {len(value)} characters, at most {MAX_PAGE}")
    if _UNSTORABLE.search(value):
        raise InvalidPageError("invalid page: it holds a control character (C0, C1 or a "
                               "bidirectional override) or is not valid Unicode (a lone "
                               "surrogate)")
    if value == WHOLE_SITE or value.startswith("/"):
        return value
    return "/" + value


def new_site(value) -> str:
    """A site named for the first time by a stranger (the ``/hit`` beacon): stricter
    than ``site`` (``.``, ``..``, ``-`` refused)."""
    site(value)
    if not NEW_SITE_RE.fullmatch(value):
        raise InvalidSiteError(f"invalid new site {value!r}: letters, digits, '.', '_' or "
                               "'-', beginning and ending with a letter or digit")
    return value


def origin(value: str) -> str | None:
    """A web origin, ``scheme://host[:port]`` lower-cased with the default port dropped;
    None if ``value`` is not one."""
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/") \
            or parts.query or parts.fragment or parts.username or parts.password:
        return None
    default = {"http": 80, "https": 443}[parts.scheme]
    suffix = f":{port}" if port and port != default else ""
    return f"{parts.scheme}://{parts.hostname.lower()}{suffix}"


def text(value, what: str, limit: int = MAX_VALUE) -> str:
    """Text a stranger sent (a referrer, a query string): at most ``limit`` characters,
    valid Unicode, no control character (C0, C1, a bidirectional override)."""
    if not isinstance(value, str):
        raise InvalidRangeError(f"{what} must be text")
    if len(value) > limit:
        raise InvalidRangeError(f"{what} is {len(value):,} characters, at most {limit:,}")
    if _UNSTORABLE.search(value):
        raise InvalidRangeError(f"{what} holds a control character (C0, C1 or a "
                                "bidirectional override) or is not valid Unicode (a lone "
                                "surrogate)")
    return value


def decoded_path(path: str) -> str:
    """A URL path's percent-escapes decoded, so a page is stored, counted, shown and
    matched as the text it names (``/nature%E2%80%99s-essence`` → ``/nature’s-essence``).
    Applied once, where a path comes in (the log parser, the ``/hit`` beacon), never to
    a stored name: ``%25`` decodes to ``%``, and decoding again would read that ``%``
    as an escape. The rules:

    - ``%XX`` runs decode as UTF-8; bytes that are not valid UTF-8 (a stray ``%FF``,
      an overlong ``%C0%AF``, an encoded surrogate ``%ED%A0%80``) stay as their escapes,
      so no replacement character or lone surrogate ever comes from decoding;
    - what decodes to a control character (``%00``-``%1F``, ``%7F``, C1), a
      bidirectional override or isolate (a name must read in its own order) or
      U+FFFD stays escaped;
    - ``%2F`` stays escaped: ``/a%2Fb`` is one segment where ``/a/b`` is two, and
      servers and APIs tell them apart (GoAccess decodes it and merges the two pages);
    - ``+`` stays ``+`` (it means a space only in query strings), and a ``%`` not
      followed by two hex digits stays as it is;
    - what stays escaped is written in upper case (RFC 3986's normal form).

    Decoding never lengthens a path, and costs one test when it holds no ``%``. A name
    may not lead back to one raw path (``%2500`` and ``%00`` both read ``%00``): names
    are for reading and counting, not for requesting."""
    if "%" not in path:
        return path
    return _ESCAPES.sub(_decoded_run, path)


def _decoded_run(match: re.Match) -> str:
    text = bytes.fromhex(match.group().replace("%", "")).decode("utf-8", "surrogateescape")
    return _KEPT.sub(_escaped, text)


def _escaped(match: re.Match) -> str:
    char = match.group()
    data = char.encode("utf-8", "surrogateescape")
    return "".join(f"%{byte:02X}" for byte in data)


def timestamp(value) -> dt.datetime:
    if not isinstance(value, dt.datetime):
        raise NaiveTimestampError(f"expected a datetime, got {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise NaiveTimestampError(
            f"timestamp {value.isoformat()} has no time zone: give one (e.g. +00:00 or Z)"
        )
    return value.astimezone(dt.UTC)


def stored_time(value: dt.datetime) -> dt.datetime:
    """A time read back from the store, aware and in UTC: MongoDB hands back naive UTC
    (pymongo without ``tz_aware``), the embedded store aware."""
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


def timezone(name) -> ZoneInfo:
    if isinstance(name, ZoneInfo):
        return name
    try:
        return ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError, TypeError, OSError):  # OSError: "Europe", a folder
        raise InvalidTimeZoneError(f"unknown time zone {name!r} (e.g. UTC, Europe/Paris)") from None


def local_midnight(moment: dt.datetime, tz: str | ZoneInfo, days_back: int = 0) -> dt.datetime:
    """The start, in UTC, of ``moment``'s day in ``tz``, or of the day ``days_back``
    before it: a local day, 23 or 25 hours long where the clocks change."""
    zone = timezone(tz)
    day = moment.astimezone(zone).date() - dt.timedelta(days=days_back)
    return dt.datetime.combine(day, dt.time(), tzinfo=zone).astimezone(dt.UTC)


def time_range(start, end) -> tuple[dt.datetime, dt.datetime]:
    start, end = timestamp(start), timestamp(end)
    if end <= start:
        raise InvalidRangeError(f"empty range: end {end.isoformat()} is not after start")
    return start, end


def parse_time(text: str, tz: str | ZoneInfo = "UTC") -> dt.datetime:
    """An ISO 8601 date or date-time; one without an offset is read in ``tz``."""
    try:
        value = dt.datetime.fromisoformat(text)
    except (TypeError, ValueError):
        raise InvalidRangeError(
            f"invalid time {text!r}: use ISO 8601, e.g. 2026-11-21 or 2026-11-21T13:45+01:00"
        ) from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone(tz))
    return value
