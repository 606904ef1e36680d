"""``custom.events``: each custom event as sent, kept as long as the raw events are.

    {_id, time, site, page, name, props: [[key, value], ...], revenue: [cur, amount] | null,
     host, user_agent, ingested, n: 1}

and each engagement (how long a page was visible, sent when it was left):
``{_id, time, site, page, engaged: ms, host, user_agent, ingested, n: 1}``.

Written by the beacon through the events' own buffered writer (``EventWriter`` with
this module's ``pack``): a request never waits on the database, a store failure keeps
the batch to send again, ``ingested`` is stamped at the write. The rollup run reads the
hours holding events ingested since its checkpoint (``touched_hours``), and the visits'
recompute reads them beside the pageviews: the address and agent make the same visitor
string, so an event joins its visitor's visit. Counted per quarter hour there
(``queries.visits.cells``) and read again only by a recompute, they expire with the raw
events. What an event may hold is checked where it comes in (``queries.custom.payload``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

from pymongo import ASCENDING

from ..stats import schema
from .writer import EventWriter

COLLECTION = "custom.events"
HOUR_MS = 3_600_000
INDEXES = {"site_time": [("site", ASCENDING), ("time", ASCENDING)],
           "ingested": [("ingested", ASCENDING)]}


def ensure_custom_indexes(db) -> list[str]:
    return [db[COLLECTION].create_index(keys, name=name) for name, keys in INDEXES.items()]


def document(time: dt.datetime, site: str, page: str, event: tuple,
             host: str | None, agent: str | None) -> dict:
    """A custom event (``(name, props, revenue)``: ``queries.custom.payload``'s
    ``CustomEvent``) as the writer takes it (its ``row``)."""
    name, props, revenue = event
    return {"time": time, "site": site, "page": page, "name": name,
            "props": [list(pair) for pair in props],
            "revenue": list(revenue) if revenue else None,
            "host": host or "", "user_agent": agent or None}


def engagement_document(time: dt.datetime, site: str, page: str, ms: int,
                        host: str | None, agent: str | None) -> dict:
    """An engagement as the writer takes it: ``ms`` the page was visible."""
    return {"time": time, "site": site, "page": page, "engaged": ms, "host": host or "",
            "user_agent": agent or None}


def pack(rows: list[dict], ingested: dt.datetime, keys=None) -> list[dict]:
    """The documents of a batch, stamped as written (one event each: ``n``)."""
    return [{**row, "ingested": ingested, "n": 1} for row in rows]


def writer(db, **options) -> EventWriter:
    """A buffered writer of custom events (``options`` as ``EventWriter``'s)."""
    return EventWriter(db, collection=COLLECTION, pack=pack, row=dict, **options)


def event_of(doc: dict) -> tuple:
    """A stored custom event's ``(name, props, revenue)``, as ``document`` took it."""
    revenue = doc.get("revenue")
    return (doc["name"], tuple(tuple(pair) for pair in doc.get("props") or ()),
            tuple(revenue) if revenue else None)


def between(db, site: str, start: dt.datetime, end: dt.datetime) -> Iterator[dict]:
    """The site's custom events of [start, end)."""
    return db[COLLECTION].find({"site": site, "time": {"$gte": start, "$lt": end}},
                               {"_id": 0, "ingested": 0, "n": 0})


def touched_hours(db, since: dt.datetime) -> dict[str, set[dt.datetime]]:
    """Per site, the UTC hours holding a custom event ingested at or after ``since``."""
    touched: dict[str, set[dt.datetime]] = {}
    for doc in db[COLLECTION].find({"ingested": {"$gte": since}},
                                   {"_id": 0, "site": 1, "time": 1}):
        ms = schema.epoch_ms(doc["time"])
        touched.setdefault(doc["site"], set()).add(schema.from_epoch_ms(ms - ms % HOUR_MS))
    return touched


def span(db, site: str) -> tuple[dt.datetime, dt.datetime] | None:
    """The first and last custom event times of the site."""
    first = db[COLLECTION].find_one({"site": site}, {"time": 1}, sort=[("time", ASCENDING)])
    if first is None:
        return None
    last = db[COLLECTION].find_one({"site": site}, {"time": 1}, sort=[("time", -1)])
    return first["time"], last["time"]


def expire(db, cutoff: dt.datetime) -> int:
    """Delete the custom events ingested before ``cutoff`` (their counts stay)."""
    return db[COLLECTION].delete_many({"ingested": {"$lt": cutoff}}).deleted_count
