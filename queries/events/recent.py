"""The most recent hits of a site's pages: MongoDB's "most recent n documents in
categories" pattern, over event buckets (``buckets``).

The site's buckets are read newest first (index ``site_end``); the events of the chosen
pages go into a heap of the ``n`` newest, and the read stops at the first bucket that
ends no later than the ``n``-th newest event found: no bucket read later can hold a newer
one, and it loses ties to those read before.
Pages with few hits would have it read the whole retention: it stops once it has looked
at the site's ``MAX_SCANNED`` newest events, and returns what it found among them (the
feed's "recent" is then the last ``MAX_SCANNED`` requests of the site).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import numpy as np

from .. import validation
from ..errors import HitboardError
from ..stats import schema
from ..validation import WHOLE_SITE
from . import buckets

MAX_N = 1000           # what the live page may ask for
MAX_SCANNED = 200_000  # events of the site looked at, at most, for rare pages


class InvalidCountError(HitboardError):
    pass


def _pages(pages: Sequence[str] | None) -> frozenset[str] | None:
    """The pages asked for, ``None`` for the whole site."""
    chosen = frozenset(validation.page(p) for p in pages or ())
    return None if not chosen or WHOLE_SITE in chosen else chosen


def _count(n) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InvalidCountError(f"invalid count {n!r}: ask for at least 1 event")
    return n


def recent_hits(db, site: str, pages: Sequence[str] | None, n: int = 100) -> list[dict]:
    """The live page's feed: the ``n`` (at most ``MAX_N``) newest events of ``pages``
    (the whole site when empty), newest first, each ``{_id, time, site, host, ...}``;
    events of one millisecond by their bucket's ``_id`` and place in it, last first."""
    if _count(n) > MAX_N:
        raise InvalidCountError(f"invalid count {n}: the feed shows at most {MAX_N} events")
    site, chosen = validation.site(site), _pages(pages)
    top: list[tuple[int, int, int, object]] = []   # (ms, -bucket no., index, bucket _id)
    scanned = 0
    # Times and pages first (a read decodes the fields it returns), the rest of the
    # events shown afterwards, from their buckets alone.
    found = buckets.newest(db, {"site": site}, () if chosen is None else ("path",))
    for number, bucket in enumerate(found):
        # Its events tie at best with the n-th, and a bucket read later loses ties.
        if len(top) == n and schema.epoch_ms(bucket["end"]) <= top[0][0]:
            break
        if scanned >= MAX_SCANNED:
            break
        scanned += bucket["n"]
        oldest = top[0][0] if len(top) == n else None
        for t, i in _newest_in(bucket, chosen, n, oldest):
            if len(top) < n:
                heapq.heappush(top, (t, -number, i, bucket["_id"]))
            elif (t, -number, i) > top[0][:3]:
                heapq.heapreplace(top, (t, -number, i, bucket["_id"]))
    top.sort(reverse=True)
    shown = {b["_id"]: b for b in buckets.by_ids(db, list({e[3] for e in top}),
                                                   ("site", *buckets.COLUMNS))}
    places: dict[object, list[int]] = {}
    for _, _, i, bucket_id in top:
        places.setdefault(bucket_id, []).append(i)
    docs = {(bucket_id, i): doc for bucket_id, indexes in places.items()
            for i, doc in zip(indexes, buckets.events(shown[bucket_id], indexes), strict=True)}
    return [docs[(bucket_id, i)] for _, _, i, bucket_id in top]


def _newest_in(bucket: dict, chosen: frozenset[str] | None, n: int,
               oldest: int | None) -> list[tuple[int, int]]:
    """(time, index) of the ``n`` newest events of ``bucket`` on the ``chosen`` pages,
    none older than ``oldest``: selected with numpy, since a bucket holds a thousand
    events and the feed may read a hundred buckets."""
    times = np.asarray(buckets.times(bucket))
    keep = np.ones(len(times), dtype=bool) if oldest is None else times >= oldest
    if chosen is not None:
        paths, codes = buckets.coded(bucket, "path", len(times))
        wanted = np.fromiter(map(chosen.__contains__, paths), bool, len(paths))
        keep &= wanted if codes is None else wanted[np.asarray(codes)]
    places = np.flatnonzero(keep)
    if len(places) > n:     # the n newest, ties to the later event, as the heap takes them
        places = places[np.lexsort((places, times[places]))[-n:]]
    return list(zip(times[places].tolist(), places.tolist(), strict=True))
