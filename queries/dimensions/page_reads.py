"""Breakdowns from raw events: one page's (the combination page × dimension is not
pre-aggregated: per-page counters would double every flush's upserts), limited to the
events still kept (``HITBOARD_EVENTS_TTL_DAYS`` after ingestion), and the last hour's on
Live (value sketches are per day at the finest; events give that hour's exact visitors
of each value, counted from the same events as its hits). The events are
grouped by what classification needs (``events.reads.grouped``), then classified here
(cached), so the work grows with distinct (client, agent, referrer, query, status), not
with hits."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from functools import lru_cache
from typing import NamedTuple

import pandas as pd

from ..events import reads as event_reads
from ..stats.sites import site_settings
from .classify import classify, is_bot_agent

# Raw events a live read (Live, Present: refreshed every few seconds) looks at, at most:
# past it a busy site's window is counted from its newest hits, or from the counters.
MAX_SCANNED = 10_000

# What a dimension's classification reads from an event, beside the visitor (address,
# agent: which also tell bots apart). Grouping by these alone keeps the groups few.
_FIELDS = {"referrer": ("r",), "utm_source": ("q",), "utm_medium": ("q",),
           "utm_campaign": ("q",), "status": ("s",), "notfound": ("s", "p"), "kind": ("p",),
           "page": ("p",), "country": ("c",)}


def event_values(db, site: str, dim: str, start: dt.datetime, end: dt.datetime,
                 humans: bool = False, page: str | None = None, bots: bool = False
                 ) -> dict[str, tuple[int, set]]:
    """{value: (hits, visitors)} of ``dim`` among the site's raw events of [start, end)
    (one ``page``'s if given), bots left out if ``humans``, bots alone if ``bots``; a
    visitor is the string the sketches hash. Past spans are read once for every
    dimension (a History view asks for a dozen of them): see :func:`_past_values`."""
    if page is None and end <= _past():
        return _past_values(db, site, start, end, humans, bots).get(dim, {})
    return _values(db, site, start, end, humans, page, bots, (dim,)).get(dim, {})


def _past() -> dt.datetime:
    """Where the live hour starts: events before it are all written."""
    return dt.datetime.now(dt.UTC).replace(minute=0, second=0, microsecond=0)


@lru_cache(maxsize=16)
def _past_values(db, site: str, start: dt.datetime, end: dt.datetime, humans: bool,
                 bots: bool) -> dict[str, dict[str, tuple[int, set]]]:
    """Every dimension's values among the events of a past span, read and classified
    once (a span's events do not change once its hour is over)."""
    return _values(db, site, start, end, humans, None, bots, None)


def _values(db, site: str, start, end, humans: bool, page: str | None, bots: bool,
            dims: tuple[str, ...] | None) -> dict[str, dict[str, tuple[int, set]]]:
    """{dimension: {value: (hits, visitors)}} of ``dims`` (None: all) among the events."""
    wanted = sorted({f for d in (dims or _FIELDS) for f in _FIELDS.get(d, ())}) \
        if dims else sorted({f for fields in _FIELDS.values() for f in fields})
    fields = ("h", "a", *(f for f in wanted if not (f == "p" and page)))
    hits: dict[str, Counter] = {}
    visitors: dict[str, dict[str, set]] = {}
    unknown_bots = site_settings(db, site).unknown_bots
    for key, n in event_reads.grouped(db, site, start, end, fields, page):
        path = page if page is not None else str(key.get("p") or "")
        found = classify(site, path, query=key.get("q"), status=key.get("s"),
                         referrer_url=key.get("r"), agent=key.get("a"), address=key.get("h"),
                         country=key.get("c"), unknown_bots=unknown_bots)
        if (humans and found.bot) or (bots and not found.bot):
            continue
        for name, value in found.values:
            if dims is None or name in dims:
                hits.setdefault(name, Counter())[value] += n
                visitors.setdefault(name, {}).setdefault(value, set()).add(found.visitor)
    return {name: {value: (n, visitors[name][value]) for value, n in counted.items()}
            for name, counted in hits.items()}


def events_breakdown(db, site: str, dim: str, start: dt.datetime, end: dt.datetime,
                     humans: bool = False, page: str | None = None) -> pd.DataFrame:
    """Hits and exact visitors per value of ``dim`` among the site's raw events of
    [start, end) (one ``page``'s if given), bots left out if ``humans``: both columns
    count the same events, so a value never has more visitors than hits."""
    found = event_values(db, site, dim, start, end, humans, page)
    rows = [{"value": v, "hits": int(n), "visitors": len(people)}
            for v, (n, people) in found.items()]
    rows.sort(key=lambda r: (-r["hits"], r["value"]))
    frame = pd.DataFrame(rows, columns=["value", "hits", "visitors"])
    frame["hits"] = frame["hits"].astype("int64")
    frame["visitors"] = frame["visitors"].astype("Int64")
    return frame


def page_breakdown(db, site: str, page: str, dim: str, start: dt.datetime,
                   end: dt.datetime, humans: bool = False) -> pd.DataFrame:
    """Hits and exact visitors per value of ``dim`` for one page over [start, end), bots
    left out if ``humans``."""
    frame = events_breakdown(db, site, dim, start, end, humans, page)
    frame.attrs["note"] = ("one page: counted from raw events, kept for the "
                           "events retention (the Data page says how long); older hits "
                           "are not included")
    return frame


class Active(NamedTuple):
    """Distinct visitors of a recent window; ``complete`` is False when the window held
    more than ``MAX_SCANNED`` hits and only its newest were read (at least this many)."""

    visitors: int
    complete: bool


def count_events(db, site: str, start: dt.datetime, end: dt.datetime,
                 limit: int | None = None) -> int:
    """The site's raw events of [start, end) (a number above ``limit`` once past it)."""
    return event_reads.count(db, site, start, end, limit)


def active_visitors(db, site: str, now: dt.datetime | None = None, minutes: int = 5,
                    humans: bool = False) -> Active:
    """Distinct (address, agent) pairs among the site's raw events of the last
    ``minutes`` (the Live page's "active now"), exact up to ``MAX_SCANNED`` hits: the
    newest that many are read (``events.reads.newest_clients``), so a busy site costs a
    bounded read; bots (by their agent) left out if ``humans``."""
    now = now or dt.datetime.now(dt.UTC)
    found = event_reads.newest_clients(db, site, now - dt.timedelta(minutes=minutes), now,
                                       MAX_SCANNED + 1)
    pairs, read = set(), 0
    for pair in found:
        read += 1
        if read > MAX_SCANNED:
            break
        pairs.add(pair)
    unknown_bots = site_settings(db, site).unknown_bots
    count = sum(1 for _, agent in pairs if not (humans and is_bot_agent(agent, unknown_bots)))
    return Active(count, read <= MAX_SCANNED)
