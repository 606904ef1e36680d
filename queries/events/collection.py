"""The ``events`` collection: every request, in buckets (``buckets``), kept for a
retention period: its indexes, its expiry, and forgetting what a log pass wrote past
a point (its writer is ``writer.EventWriter``).

An event is ``{time, site, host, method, path, query, status, bytes, referrer,
user_agent}``, plus ``country`` where the source knows it better than the address does
(the load generator's drawn visitors). ``path`` is the page (no query string); ``time`` is
when the request happened (aware UTC). A bucket's ``ingested`` is when it was written:
rollups find what changed since their last run by ``ingested``, so a late event (an old
``time``) counts.

Retention counts from ``ingested``, not ``time`` (backfilling the 2015 test file would
otherwise delete every event at once), and events leave only once the rollups have read
them: :func:`expire` runs after each rollup run and deletes what is both older than the
retention and behind the rollups' checkpoint. A TTL index cannot wait for the rollups (a
rollup job stopped for longer than the retention would lose hours), so there is none.
Events of a store written before buckets (one document per request) are moved into
buckets on first open (``upgrade``).

Events from log files are written with their place in the file (``key``: the pass's
:func:`stream_key` and the line's byte offset). Their buckets carry ``stream``, ``first``
and ``last`` offsets and an ``_id`` made of the stream and first offset, so mapping the
same lines the same way again stores them once (the second insert is a duplicate key:
"present"), and an ingest that resumes a pass first removes what the pass wrote past the
point it resumes from (:func:`forget`), since it reads those lines again. Beacon and load
generator events get server-made ObjectIds.
"""

from __future__ import annotations

import datetime as dt
import hashlib

from pymongo import ASCENDING

from ..errors import HitboardError
from ..stats import schema
from . import buckets, expired, upgrade

INGESTED_INDEX = "ingested"
INDEXES = {
    # A site's buckets over time (``buckets.overlapping``): every time-range read, and
    # the feed's newest first (``_id`` orders buckets ending in the same millisecond).
    # ``start`` lets the embedded store check a range's other end on the index alone.
    "site_end": [("site", ASCENDING), ("end", ASCENDING), ("_id", ASCENDING),
                 ("start", ASCENDING)],
    # What changed since the rollups' checkpoint, and what expiry removes.
    INGESTED_INDEX: [("ingested", ASCENDING)],
    # A log pass's buckets by place in the file: what a resumed ingest rewrites.
    "stream_first": [("stream", ASCENDING), ("first", ASCENDING)],
}


def check_retention(days) -> int:
    """``days`` as a retention in days, or a clear error (1 to 36,500)."""
    try:
        value = int(days)
    except (TypeError, ValueError):
        value = 0
    if value < 1 or value > 36_500:
        raise HitboardError(f"invalid event retention {days!r}: a whole number of days, 1 or more")
    return value


def ensure_event_indexes(db) -> list[str]:
    """Create the events indexes, then move the events of an older store (a document
    per request) into buckets (``upgrade``)."""
    events = db[schema.EVENTS]
    existing = {name: tuple(tuple(pair) for pair in spec["key"])
                for name, spec in events.index_information().items()}
    names = [name if existing.get(name) == tuple(keys) else events.create_index(keys, name=name)
             for name, keys in INDEXES.items()]
    names += [db[schema.APART].create_index(keys, name=name)       # the same reads
              for name, keys in INDEXES.items()]
    names += [db[expired.COLLECTION].create_index(keys, name=name)
              for name, keys in expired.INDEXES.items()]
    upgrade.move_old_events(db)
    return names


def expire(db, retention: int, rolled_up_until: dt.datetime,
           now: dt.datetime | None = None) -> int:
    """Delete the events ingested more than ``retention`` days ago that the rollups have
    read (ingested before ``rolled_up_until``), their hourly totals kept for the rollups
    (``expired``), and the hits kept apart as old (``apart``); returns how many counted
    events left."""
    old = {"ingested": {"$lt": cutoff(retention, rolled_up_until, now)}}
    db[schema.APART].delete_many(old)
    return expired.expire(db, old)


def cutoff(retention: int, rolled_up_until: dt.datetime, now: dt.datetime | None = None
           ) -> dt.datetime:
    """What was ingested before this may expire: past the retention, read by the rollups."""
    now = now or dt.datetime.now(dt.UTC)
    return min(now - dt.timedelta(days=check_retention(retention)), rolled_up_until)


def stream_key(source: str) -> int:
    """A 64-bit key naming one pass over one file (see :func:`event_id`)."""
    return int.from_bytes(hashlib.blake2b(source.encode(), digest_size=8).digest(), "big")


def forget(db, stream: int, offset: int) -> int:
    """Delete the events of the pass ``stream`` from byte ``offset`` on (buckets never
    straddle it: an ingest resumes only where a chunk of lines ended), those it kept
    apart too; returns how many counted buckets left."""
    name = buckets.stream_name(stream)
    expired.forget(db, name, offset)
    past = {"stream": name, "first": {"$gte": offset}}
    db[schema.APART].delete_many(past)
    return db[schema.EVENTS].delete_many(past).deleted_count
