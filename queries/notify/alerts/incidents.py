"""An incident is one ``anomaly`` note: written when a window leaves the expected range
in one direction, its ``until`` moved while it stays out, its ``resolved`` time set when
it is back. Charts draw it as any note; Live's banner shows the open ones.

Besides the note's own fields: ``direction`` (above, below, stopped), ``page`` (None:
the whole site), ``window`` (minutes), ``until`` (the end of the last window seen
outside), ``resolved`` (None while open). Its ``_id`` is deterministic (site, page,
direction, window, start), so two workers opening it at once write one note.
"""

from __future__ import annotations

import datetime as dt

from ... import annotations as notes
from ... import validation

# A new incident in the same direction waits this long after the previous one is resolved.
QUIET = dt.timedelta(minutes=60)
# An open incident not seen outside for this long is not shown: its checker stopped.
STALE = dt.timedelta(minutes=15)


def incident_key(site: str, page: str | None, direction: str, minutes: int) -> str:
    """What tells one alert's incidents apart from another's."""
    return f"{site}|{page or '*'}|{direction}|{minutes}"


def latest(db, site: str, page: str | None, direction: str, minutes: int) -> dict | None:
    """The newest incident of these site, page, direction and window."""
    return db[notes.COLLECTION].find_one(
        {"site": site, "kind": "anomaly",
         "incident": incident_key(site, page, direction, minutes)},
        sort=[("time", -1)])


def may_open(previous: dict | None, now: dt.datetime) -> bool:
    """A new incident may start: none before, or the last resolved ``QUIET`` ago."""
    if previous is None:
        return True
    resolved = previous.get("resolved")
    return resolved is not None and validation.stored_time(resolved) + QUIET <= now


def open_incident(db, site: str, page: str | None, direction: str, minutes: int,
                  end: dt.datetime, text: str) -> dict:
    """Write the incident's note at ``end`` (the first window seen outside) once; the
    note, whoever wrote it."""
    incident = incident_key(site, page, direction, minutes)
    key = f"anomaly/{incident}/{end:%Y%m%dT%H%M}"
    shown = text if len(text) <= notes.MAX_TEXT else text[:notes.MAX_TEXT - 1] + "…"
    if notes.add_annotation(db, site, end, shown, "anomaly", "hitboard", key=key) is not None:
        db[notes.COLLECTION].update_one({"_id": key}, {"$set": {
            "incident": incident, "direction": direction, "page": page, "window": minutes,
            "until": end, "resolved": None}})
    return db[notes.COLLECTION].find_one({"_id": key})


def extend(db, incident: dict, end: dt.datetime) -> None:
    if validation.stored_time(incident["until"]) < end:
        db[notes.COLLECTION].update_one({"_id": incident["_id"], "resolved": None},
                                        {"$set": {"until": end}})


def resolve(db, incident: dict, end: dt.datetime) -> bool:
    """Mark the incident back to normal at ``end``; False when it already was."""
    return db[notes.COLLECTION].update_one(
        {"_id": incident["_id"], "resolved": None},
        {"$set": {"resolved": end}}).modified_count == 1


def open_incidents(db, site: str, now: dt.datetime, page: str | None = None) -> list[dict]:
    """The site's (page's) incidents still open and seen outside lately (``STALE``),
    newest first: what Live's banner shows."""
    since = validation.timestamp(now) - STALE
    return list(db[notes.COLLECTION].find(
        {"site": site, "kind": "anomaly", "incident": {"$exists": True}, "resolved": None,
         "page": page,
         "until": {"$gte": since}}, sort=[("time", -1)], limit=5))
