"""Events of a store written before buckets: one document per request in ``events``,
moved into buckets (``events.buckets``) on first open.

Each run of old documents sharing a site and an ``ingested`` stamp (one write of the
writer that made them) becomes buckets with that stamp, so the rollups' checkpoint and
the retention treat every event as before. The move goes a batch at a time, in ``_id``
order: the batch's buckets are inserted, named after their first event's ``_id``, then
its documents deleted. A process killed midway, or two opening the store at once,
insert the same buckets again (a duplicate is skipped) and delete the same documents,
so no event is lost or doubled. A document that is not an event (no site or time) is
left where it is, and said.
"""

from __future__ import annotations

import datetime as dt
import logging
from itertools import groupby

from .. import bulk
from ..stats import schema
from . import buckets

log = logging.getLogger(__name__)
OLD = "events"
BATCH = 20_000


def move_old_events(db) -> int:
    """Move every event of the old ``events`` collection into buckets, dropping it once
    empty; returns how many moved (0 when there is none)."""
    if OLD not in db.list_collection_names():
        return 0
    log.warning("moving the raw events of an older store into buckets (once; a few "
                "minutes for millions of events)")
    old, moved, kept = db[OLD], 0, 0
    while docs := list(old.find(sort=[("_id", 1)], skip=kept, limit=BATCH)):
        events = [doc for doc in docs if _is_event(doc)]
        kept += len(docs) - len(events)
        bulk.insert_new(db[schema.EVENTS], _buckets(events))
        ids = [doc["_id"] for doc in events]
        for i in range(0, len(ids), bulk.IDS_PER_QUERY):
            old.delete_many({"_id": {"$in": ids[i:i + bulk.IDS_PER_QUERY]}})
        moved += len(events)
    if kept:
        log.warning("%d documents of the old events collection are not events (no site or "
                    "time): left in %r", kept, OLD)
    else:
        old.drop()
    return moved


def _is_event(doc: dict) -> bool:
    return isinstance(doc.get("site"), str) and isinstance(doc.get("time"), dt.datetime)


def _buckets(events: list[dict]) -> list[dict]:
    """Buckets of ``events`` (in ``_id`` order) per site, ``ingested`` stamp and UTC
    hour, each named after its first event."""
    stamp = schema.from_epoch_ms(0)

    def group(doc: dict) -> tuple:
        return (doc["site"], doc.get("ingested") or stamp,
                schema.epoch_ms(doc["time"]) // buckets.HOUR_MS)

    out = []
    for (_, ingested, _), run in groupby(sorted(events, key=group), key=group):
        run = list(run)
        for i in range(0, len(run), buckets.BUCKET_EVENTS):
            part = run[i:i + buckets.BUCKET_EVENTS]
            (bucket,) = buckets.pack(list(map(buckets.row, part)), ingested)
            out.append({"_id": f"v1/{part[0]['_id']}", **bucket})
    return out
