"""What the journal holds: one JSON line per accepted request, enough to count it later
exactly as it would have been counted at once.

- ``h``, a page view the site's counters count: its time, site, page, query, the page's
  own referrer, the sender's address, method, ``Referer`` header and agent, and whether
  the site counts unknown agents as bots (as it did when the hit came);
- ``c``, a custom event or an engagement: the document ``queries.events.custom`` keeps;
- ``a``, a page view kept apart (the site's logs count it): the raw event.

Times are whole microseconds since the epoch; strings are JSON's (ASCII escapes), so any
text the request held reads back the same.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import NamedTuple

PAGEVIEW, CUSTOM, APART = "h", "c", "a"
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_US = dt.timedelta(microseconds=1)


class Pageview(NamedTuple):
    time: dt.datetime
    site: str
    page: str
    query: str
    referrer: str | None      # the page's own (``document.referrer``), if sent
    address: str
    method: str
    referer: str | None       # the request's header: the page that sent the beacon
    agent: str | None
    unknown_bots: bool


def pageview(hit: Pageview) -> bytes:
    return _line([PAGEVIEW, _micros(hit.time), *hit[1:]])


def document(kind: str, doc: dict) -> bytes:
    """A custom event's or a kept-apart event's document (``CUSTOM``, ``APART``)."""
    return _line([kind, {**doc, "time": _micros(doc["time"])}])


def decode(line: bytes) -> tuple[str, Pageview | dict]:
    kind, *rest = json.loads(line)
    if kind == PAGEVIEW:
        return kind, Pageview(_time(rest[0]), *rest[1:])
    doc = rest[0]
    doc["time"] = _time(doc["time"])
    return kind, doc


def _line(value) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode() + b"\n"


def _micros(time: dt.datetime) -> int:
    return (time - _EPOCH) // _US


def _time(micros: int) -> dt.datetime:
    return _EPOCH + dt.timedelta(microseconds=micros)
