"""The most recent hits of a site's pages: what MongoDB's
"most recent n documents in categories" pattern answers.

Two strategies answer it over the index ``{site: 1, path: 1, time: -1}``; both return the
same list as sorting every matching event by ``(time, _id)`` descending and keeping the
first ``n``:

* **sort+limit**: ``find().sort(time desc).limit(n)``, either one query over the ``$in``
  of the pages (``merge="in"``; a server merges the index branches) or one query per page
  merged here (``merge="branches"``, what servers before 3.x needed).
* **bounded window**: count the events newer than a moving edge, doubling the window
  until it holds at least ``min`` events, then binary-searching its edge until the count
  lies in ``[min, max]``; then fetch just that window. It never sorts on the server.

``recent_hits`` uses the one ``bench/recent.py`` measured faster (see README). The bounded
window (``recent_window``, ``find_window``) and ``Trace`` serve only that bench and its
tests: they are kept because they are the measured alternative the README's figures
compare against.
Events with equal ``time`` are ordered by ``_id`` so every strategy gives one answer.
"""

from __future__ import annotations

import datetime as dt
import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field

from pymongo import DESCENDING

from .. import validation
from ..errors import HitboardError
from ..stats import schema
from ..validation import WHOLE_SITE
from .collection import INDEXES as EVENT_INDEXES

MAX_N = 1000  # what the live page may ask for; the bench calls the strategies directly
# The events indexes the feed reads: pages' events newest first; the whole site's.
FEED_INDEXES = ("site_path_time", "site_time")
RECENT_INDEX = EVENT_INDEXES["site_path_time"]
INITIAL_SPAN_MS = 60_000
NEWEST_FIRST = [("time", DESCENDING)]


class InvalidCountError(HitboardError):
    pass


@dataclass
class Trace:
    """What a strategy asked of the store: each query (for explain) and documents returned."""

    queries: list[dict] = field(default_factory=list)
    returned: int = 0

    def add(self, kind: str, filter: dict, sort=None, limit: int = 0, returned: int = 0):
        self.queries.append({"kind": kind, "filter": filter, "sort": sort, "limit": limit})
        self.returned += returned


def ensure_recent_index(db) -> None:
    """The indexes the strategies read (``ensure_indexes`` makes them with the events'
    ones); an index already on the same keys under another name is kept as it is."""
    coll = db[schema.EVENTS]
    existing = {tuple(tuple(pair) for pair in info["key"])
                for info in coll.index_information().values()}
    for name in FEED_INDEXES:
        if tuple(EVENT_INDEXES[name]) not in existing:
            coll.create_index(EVENT_INDEXES[name], name=name)


def _filter(site: str, pages: Sequence[str] | None) -> dict:
    site = validation.site(site)
    page_list = sorted({validation.page(p) for p in pages or ()})
    if not page_list or WHOLE_SITE in page_list:
        return {"site": site}
    if len(page_list) == 1:
        return {"site": site, "path": page_list[0]}
    return {"site": site, "path": {"$in": page_list}}


def _count(n) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InvalidCountError(f"invalid count {n!r}: ask for at least 1 event")
    return n


def _order_key(doc: dict):
    return doc["time"], doc["_id"]


def _newest(docs, n: int) -> list[dict]:
    return heapq.nlargest(n, docs, key=_order_key)


def _find(db, flt: dict, trace: Trace | None, kind: str, sort=None, limit: int = 0):
    cursor = db[schema.EVENTS].find(flt, sort=sort, limit=limit)
    docs = list(cursor)
    if trace is not None:
        trace.add(kind, flt, sort, limit, returned=len(docs))
    return docs


def _complete_ties(db, flt: dict, docs: list[dict], cut_time, trace) -> list[dict]:
    """A limit may cut events that share the time of the last one kept: fetch them all so
    the ``_id`` order decides, as in the brute-force answer."""
    kept = [d for d in docs if d["time"] != cut_time]
    return kept + _find(db, {**flt, "time": cut_time}, trace, "ties")


def recent_sort_limit(db, site: str, pages: Sequence[str] | None, n: int, *,
                      merge: str = "in", trace: Trace | None = None) -> list[dict]:
    """The ``n`` newest events, newest first, by sort+limit (``merge``: ``in`` or
    ``branches``)."""
    n = _count(n)
    flt = _filter(site, pages)
    if merge == "in" or not isinstance(flt.get("path"), dict):
        branches = [flt]
    elif merge == "branches":
        branches = [{**flt, "path": path} for path in flt["path"]["$in"]]
    else:
        raise HitboardError(f"unknown merge {merge!r}: use 'in' or 'branches'")
    docs, cut_times = [], set()
    for branch in branches:
        # One more than needed: a cut tie shows as the last two sharing a time.
        found = _find(db, branch, trace, "find", NEWEST_FIRST, n + 1)
        docs.extend(found)
        if len(found) > n:
            cut_times.add(found[-1]["time"])
    top = _newest(docs, n)
    if len(top) == n and top[-1]["time"] in cut_times:
        top = _newest(_complete_ties(db, flt, docs, top[-1]["time"], trace), n)
    return top


@dataclass(frozen=True)
class Window:
    """Events with ``time >= start`` (all of them when ``start`` is None): ``count`` of
    them, found after ``probes`` counts."""

    start: dt.datetime | None
    count: int
    probes: int


def find_window(db, site: str, pages: Sequence[str] | None, min_count: int, max_count: int,
                *, trace: Trace | None = None) -> Window:
    """A window ending at the newest event holding ``min_count..max_count`` events.

    If fewer than ``min_count`` events exist, the window is all of them; if more than
    ``max_count - min_count`` events share the millisecond at the edge no edge can
    satisfy both bounds, and the narrowest window holding ``min_count`` is returned.
    """
    min_count = _count(min_count)
    if max_count < min_count:
        raise InvalidCountError(f"max {max_count} is below min {min_count}")
    flt = _filter(site, pages)
    ends = [_find(db, flt, trace, "edge", [("time", order)], 1) for order in (-1, 1)]
    if not ends[0]:
        return Window(None, 0, 0)
    newest, oldest = schema.epoch_ms(ends[0][0]["time"]), schema.epoch_ms(ends[1][0]["time"])
    probes = 0

    def count(span_ms: int) -> int:
        nonlocal probes
        probes += 1
        window = {**flt, "time": {"$gte": schema.from_epoch_ms(newest - span_ms)}}
        found = db[schema.EVENTS].count_documents(window)
        if trace is not None:
            trace.add("count", window)
        return found

    # A span of -1 ms holds nothing: count(low) < min_count holds from the start.
    low, high, high_count = -1, INITIAL_SPAN_MS, None
    while True:
        if newest - high <= oldest:
            found = count(newest - oldest)
            if found <= max_count:
                return Window(None, found, probes)
            high, high_count = newest - oldest, found
            break
        found = count(high)
        if found > max_count:
            high_count = found
            break
        if found >= min_count:
            return Window(schema.from_epoch_ms(newest - high), found, probes)
        low, high = high, high * 2
    # count(low) < min_count < max_count < count(high): narrow the edge between them.
    while high - low > 1:
        middle = (low + high) // 2
        found = count(middle)
        if min_count <= found <= max_count:
            return Window(schema.from_epoch_ms(newest - middle), found, probes)
        if found < min_count:
            low = middle
        else:
            high, high_count = middle, found
    return Window(schema.from_epoch_ms(newest - high), high_count, probes)


def recent_window(db, site: str, pages: Sequence[str] | None, n: int, *,
                  slack: float = 0.5, trace: Trace | None = None) -> list[dict]:
    """The ``n`` newest events, newest first, read as one window of ``n..n*(1+slack)``
    events sorted here."""
    n = _count(n)
    window = find_window(db, site, pages, n, n + max(int(n * slack), 1), trace=trace)
    flt = _filter(site, pages)
    if window.start is not None:
        flt["time"] = {"$gte": window.start}
    return _newest(_find(db, flt, trace, "window") if window.count else [], n)


def recent_hits(db, site: str, pages: Sequence[str] | None, n: int = 100) -> list[dict]:
    """The live page's feed: the ``n`` (at most ``MAX_N``) newest events of ``pages`` (the
    whole site when empty), newest first, by the strategy measured faster."""
    if _count(n) > MAX_N:
        raise InvalidCountError(f"invalid count {n}: the feed shows at most {MAX_N} events")
    return recent_sort_limit(db, site, pages, n, merge="in")
