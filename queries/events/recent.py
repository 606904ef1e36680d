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
from collections.abc import Iterable, Sequence
from itertools import compress

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
        times = buckets.times(bucket)
        scanned += len(times)
        found_here: Iterable[int] = range(len(times))
        if chosen is not None:
            paths, codes = buckets.coded(bucket, "path", len(times))
            if codes is None:
                codes, hits = paths, chosen
            else:
                hits = {code for code, path in enumerate(paths) if path in chosen}
            found_here = compress(found_here, map(hits.__contains__, codes))
        for i in found_here:
            t = times[i]
            if len(top) < n:
                heapq.heappush(top, (t, -number, i, bucket["_id"]))
            elif (t, -number, i) > top[0][:3]:
                heapq.heapreplace(top, (t, -number, i, bucket["_id"]))
    top.sort(reverse=True)
    shown = {b["_id"]: b for b in buckets.by_ids(db, list({e[3] for e in top}),
                                                   ("site", *buckets.COLUMNS))}
    return [buckets.event(shown[bucket_id], i) for _, _, i, bucket_id in top]
