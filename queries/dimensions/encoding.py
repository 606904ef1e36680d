"""Dimension values as field names, safely, and the cap on distinct values per document.

A value (a referrer host, a UTM campaign, a 404 path) becomes a field name under
``v.<dimension>`` so that ``$inc`` can count it in an upsert. MongoDB field names cannot
contain ``.`` or NUL nor start with ``$``, so ``%``, ``.``, ``$`` and NUL are
percent-encoded (``%25 %2E %24 %00``); encoding ``%`` first makes it exactly reversible,
and nothing else changes, so stored names stay readable. Values are cut to ``MAX_VALUE``
characters first.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..errors import InvalidRangeError

MAX_VALUE = 200
OTHER = "(other)"
EMPTY = "(empty)"
_ESCAPE = {"%": "%25", ".": "%2E", "$": "%24", "\x00": "%00"}
_ESCAPE_RE = re.compile(r"[%.$\x00]")
_UNESCAPE_RE = re.compile(r"%(25|2E|24|00)")
_UNESCAPE = {"25": "%", "2E": ".", "24": "$", "00": "\x00"}

# Distinct values kept per dimension in one document (hour, day or month); the rest are
# summed under "(other)". The values a flush brings beyond the cap are ranked by count:
# the most frequent take the free places.
CAPS = {
    "referrer": 200, "utm_source": 100, "utm_medium": 50, "utm_campaign": 100,
    "status": 60, "browser": 100, "os": 60, "device": 6, "country": 250,
    "bot": 3, "kind": 3, "page": 300, "notfound": 100,
}
DIMENSIONS = tuple(CAPS)


class UnknownDimensionError(InvalidRangeError):
    pass


def dimension(name) -> str:
    """``name`` if it is a dimension, else a clear error."""
    if name not in DIMENSIONS:
        raise UnknownDimensionError(
            f"unknown dimension {str(name)[:40]!r}: one of {', '.join(DIMENSIONS)}")
    return name


def clean(value) -> str:
    """The value as stored: a string of at most ``MAX_VALUE`` characters, never empty,
    valid UTF-8 (a lone surrogate, which no database can store, becomes ``?``)."""
    text = str(value)[:MAX_VALUE]
    if not text.isascii():
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text if text else EMPTY


@lru_cache(maxsize=65_536)
def escape(value: str) -> str:
    """A field-name-safe, reversible form of ``value`` (cached: values repeat)."""
    return _ESCAPE_RE.sub(lambda m: _ESCAPE[m.group()], value)


def unescape(name: str) -> str:
    return _UNESCAPE_RE.sub(lambda m: _UNESCAPE[m.group(1)], name)


def cap(dimension: str, known: set[str] | None, counts: dict[str, int]) -> dict[str, int]:
    """``counts`` (escaped value → hits) to add to a document already holding ``known``
    values of ``dimension``: new values take the free places, most frequent first, and
    the rest go to ``(other)``. One place is kept for ``(other)``, so a document never
    holds more than ``CAPS[dimension]`` values. ``known`` None (unreadable): no new value."""
    limit = CAPS[dimension]
    other = escape(OTHER)
    free = 0 if known is None else limit - 1 - len(known) + (other in known)
    known = known if known is not None else set()
    if len(counts) <= free or counts.keys() <= known:   # every value fits: the usual case
        return dict(counts)
    kept: dict[str, int] = {}
    overflow = 0
    new = []
    for value, n in counts.items():
        if value in known or value == other:
            kept[value] = kept.get(value, 0) + n
        else:
            new.append((n, value))
    new.sort(key=lambda item: (-item[0], item[1]))
    for i, (n, value) in enumerate(new):
        if i < free:
            kept[value] = n
        else:
            overflow += n
    if overflow:
        kept[other] = kept.get(other, 0) + overflow
    return kept
