"""Checks on every value that reaches the store. Site and page names are stored as
values, never as field names, so a page may hold ``.`` or ``$``; only what could corrupt
a document or an ``_id`` is refused."""

from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .errors import (
    InvalidPageError,
    InvalidRangeError,
    InvalidSiteError,
    InvalidTimeZoneError,
    NaiveTimestampError,
)

SITE_RE = re.compile(r"[A-Za-z0-9._-]{1,64}")
MAX_PAGE = 2048
WHOLE_SITE = "*"
MAX_MINUTE_SPAN = dt.timedelta(days=400)


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
    if "\x00" in value:
        raise InvalidPageError("invalid page: it contains a NUL character")
    if value == WHOLE_SITE or value.startswith("/"):
        return value
    return "/" + value


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
