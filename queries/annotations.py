"""Annotations: short notes pinned to a moment ("deployed v2.3", "load test"), for one
site or all of them, drawn on every time chart.

One document per note in ``annotations``: ``{_id, site, time, text, kind, author,
created}``; ``site`` is a site name or ``*`` (all sites; no site can be named ``*``).
The ``site_time`` index serves the charts' one read per range: ``site $in [S, "*"]`` and
``time`` in ``[start, end)``. Automatic notes that must be written once (an excursion of
the expected range) carry a deterministic string ``_id``; the others an ObjectId.
"""

from __future__ import annotations

import datetime as dt
import logging

from bson import ObjectId
from bson.errors import InvalidId
from pymongo.errors import DuplicateKeyError, PyMongoError

from . import validation
from .errors import HitboardError

log = logging.getLogger(__name__)
COLLECTION = "annotations"
ALL_SITES = "*"
KINDS = ("note", "deploy", "load-test", "spike", "backfill", "anomaly")
MAX_TEXT = 280
MAX_AUTHOR = 64
MAX_READ = 500  # notes one chart shows at most: a range holding more shows the newest


class InvalidAnnotationError(HitboardError):
    """An annotation's text, kind, author or id is not acceptable."""


def ensure_annotation_indexes(db) -> list[str]:
    return [db[COLLECTION].create_index([("site", 1), ("time", 1)], name="site_time")]


def check_site(value) -> str:
    """A site name, or ``*`` for every site."""
    return ALL_SITES if value in (None, "", ALL_SITES) else validation.site(value)


def check_text(value) -> str:
    if not isinstance(value, str):
        raise InvalidAnnotationError(f"text must be a string, got {type(value).__name__}")
    text = value.strip()
    if not text:
        raise InvalidAnnotationError("text is empty: say what happened")
    if len(text) > MAX_TEXT:
        raise InvalidAnnotationError(f"text has {len(text)} characters, at most {MAX_TEXT}")
    if validation.has_control(text.replace("\n", "").replace("\t", "")):
        raise InvalidAnnotationError("text contains a control character (C0 but newline "
                                     "and tab, C1 or a bidirectional override)")
    return text


def check_kind(value) -> str:
    if value not in KINDS:
        raise InvalidAnnotationError(f"unknown kind {value!r}: use one of {', '.join(KINDS)}")
    return value


def check_author(value) -> str:
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > MAX_AUTHOR or "\x00" in value:
        raise InvalidAnnotationError(f"author must be text of at most {MAX_AUTHOR} characters")
    return value.strip()


def add_annotation(db, site, time: dt.datetime, text, kind: str = "note", author=None,
                   key: str | None = None) -> str | None:
    """Store one note; returns its id. ``time`` must carry a zone. With ``key`` the note
    is written at most once: a second call with the same key stores nothing, returns None."""
    doc = {"site": check_site(site), "time": validation.timestamp(time),
           "text": check_text(text), "kind": check_kind(kind),
           "author": check_author(author), "created": dt.datetime.now(dt.UTC)}
    if key is not None:
        doc["_id"] = key
        try:
            db[COLLECTION].insert_one(doc)
        except DuplicateKeyError:
            return None
        return key
    return str(db[COLLECTION].insert_one(doc).inserted_id)


def annotations_between(db, site: str, start: dt.datetime, end: dt.datetime,
                        limit: int = MAX_READ) -> list[dict]:
    """Notes of ``site`` and of all sites in ``[start, end)``, oldest first."""
    start, end = validation.time_range(start, end)
    cursor = db[COLLECTION].find(
        {"site": {"$in": [check_site(site), ALL_SITES]}, "time": {"$gte": start, "$lt": end}},
        sort=[("time", -1)], limit=limit)
    return sorted((_public(doc) for doc in cursor), key=lambda a: a["time"])


def list_annotations(db, site=None, limit: int = 100) -> list[dict]:
    """The newest notes, of ``site`` (and all sites) or of every site; newest first."""
    query = {} if site is None else {"site": {"$in": [check_site(site), ALL_SITES]}}
    return [_public(doc) for doc in db[COLLECTION].find(query, sort=[("time", -1)],
                                                        limit=limit)]


def delete_annotation(db, annotation_id) -> bool:
    """Remove one note by the id ``list`` shows; False when there is none."""
    return db[COLLECTION].delete_one({"_id": _parse_id(annotation_id)}).deleted_count == 1


def _parse_id(value):
    if not isinstance(value, str) or not value or len(value) > 200:
        raise InvalidAnnotationError(f"invalid annotation id {value!r}")
    try:
        return ObjectId(value)
    except InvalidId:
        return value  # a keyed automatic note


def _public(doc: dict) -> dict:
    return {"id": str(doc["_id"]), "site": doc.get("site", ALL_SITES),
            "time": validation.stored_time(doc["time"]),
            "text": doc.get("text", ""), "kind": doc.get("kind", "note"),
            "author": doc.get("author", "")}


def record_activity(db, sites, text: str, kind: str, when: dt.datetime | None = None) -> int:
    """An automatic note (``author`` "hitboard") for each of ``sites`` (a note on
    generated traffic belongs to the generated sites, not to every site); the text is cut
    to fit. A failure is logged, never raised: the activity itself went through."""
    when = when or dt.datetime.now(dt.UTC)
    text = text if len(text) <= MAX_TEXT else text[:MAX_TEXT - 1] + "…"
    written = 0
    for site in sorted(set(sites)) or [ALL_SITES]:
        try:
            add_annotation(db, site, when, text, kind, "hitboard")
            written += 1
        except (HitboardError, PyMongoError):
            log.warning("could not record the note %r on %s", text, site, exc_info=True)
    return written


def record_excursion(db, site: str, hour: dt.datetime, direction: str, text: str) -> str | None:
    """Note an hour outside the expected range once per excursion: an hour that follows
    one already noted in the same direction extends that note (its ``until``) instead of
    adding another. Returns the new note's id, None when it extended or already had one."""
    site, hour = check_site(site), validation.timestamp(hour)
    previous = hour - dt.timedelta(hours=1)
    ongoing = db[COLLECTION].find_one(
        {"site": site, "time": {"$gte": hour - dt.timedelta(days=7), "$lte": hour},
         "kind": "anomaly", "direction": direction, "until": {"$gte": previous}},
        sort=[("time", -1)])
    if ongoing is not None:
        if ongoing["until"].replace(tzinfo=dt.UTC) < hour:
            db[COLLECTION].update_one({"_id": ongoing["_id"]}, {"$set": {"until": hour}})
        return None
    key = f"anomaly/{site}/{hour:%Y%m%dT%H}/{direction}"
    ident = add_annotation(db, site, hour, text, "anomaly", "hitboard", key=key)
    if ident is not None:
        db[COLLECTION].update_one({"_id": key}, {"$set": {"direction": direction,
                                                          "until": hour}})
    return ident
