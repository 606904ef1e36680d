"""``events.apart``: the raw events of hits sent by a site's other source, kept apart.

A site's counters count its primary source's hits alone (``stats.sites.primary_source``):
a site fed by its access logs and by the beacon would otherwise count each page view
twice. The other source's hits are stored here instead, in the same buckets as
``events.buckets`` (a log's keyed by their place in the file, so a re-read stores them
once), for the Sources view to set beside the counted ones; nothing else reads them.
They expire and are forgotten with the events (``collection.expire``, ``forget``).
"""

from __future__ import annotations

from ..stats import schema
from .writer import EventWriter

COLLECTION = schema.APART


def writer(db, **options) -> EventWriter:
    """A writer of hits kept apart (``options`` as ``EventWriter``'s)."""
    return EventWriter(db, collection=COLLECTION, **options)

