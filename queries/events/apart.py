"""``events.apart``: the raw events of hits sent by a site's other source, kept apart.

A site's counters count its primary source's hits alone (``stats.sites.primary_source``):
a site fed by its access logs and by the beacon would otherwise count each page view
twice. The other source's hits are stored here instead, in the same buckets as
``events.buckets`` (a log's keyed by their place in the file, so a re-read stores them
once), for the Sources view to set beside the counted ones; nothing else reads them.
They are kept for the events' retention.
"""

from __future__ import annotations

import datetime as dt

from ..stats import schema
from . import buckets
from .collection import INDEXES, EventWriter

COLLECTION = schema.APART


def ensure_apart_indexes(db) -> list[str]:
    return [db[COLLECTION].create_index(keys, name=name) for name, keys in INDEXES.items()]


def writer(db, **options) -> EventWriter:
    """A writer of hits kept apart (``options`` as ``EventWriter``'s)."""
    return EventWriter(db, collection=COLLECTION, **options)


def forget(db, stream: int, offset: int) -> int:
    """What a log pass kept apart from byte ``offset`` on (a resumed ingest reads it
    again), as ``collection.forget`` does for the counted events."""
    return db[COLLECTION].delete_many(
        {"stream": buckets.stream_name(stream), "first": {"$gte": offset}}).deleted_count


def expire(db, cutoff: dt.datetime) -> int:
    """Delete what was kept apart before ``cutoff`` (as the events expire)."""
    return db[COLLECTION].delete_many({"ingested": {"$lt": cutoff}}).deleted_count
