"""What the rest of hitboard asks of the raw events, as small named questions.

The rollups, the breakdowns of a page or a filter, the live panels and the rollup status
read events only through these functions (the recent feed, ``recent``, and the writer,
``collection``, are the other two modules that know how events are stored), so the
events' storage can change without touching what reads them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Sequence

from ..stats import schema

# The fields a grouped read may ask for, by short name (``grouped``).
FIELDS = {"h": "host", "a": "user_agent", "r": "referrer", "q": "query", "s": "status",
          "p": "path", "c": "country"}
_HOUR = dt.timedelta(hours=1)


def touched_hours(db, since: dt.datetime) -> dict[str, set[dt.datetime]]:
    """Per site, the UTC hours holding an event ingested at or after ``since``."""
    pipeline = [
        {"$match": {"ingested": {"$gte": since}}},
        {"$group": {"_id": {"site": "$site", **_hour_parts()}}},
    ]
    touched: dict[str, set[dt.datetime]] = {}
    for row in db[schema.EVENTS].aggregate(pipeline):
        touched.setdefault(row["_id"]["site"], set()).add(_hour_start(row["_id"]))
    return touched


def hourly_totals(db, site: str, hours: Iterable[dt.datetime],
                  ) -> Iterator[tuple[dt.datetime, str, object, int, int]]:
    """``(hour, path, status, hits, bytes)`` over the site's events of ``hours``: one
    query matching just those hours (runs of consecutive hours, each one range of the
    ``site_time`` index, which covers it)."""
    pipeline = [
        {"$match": {"site": site, "$or": [
            {"time": {"$gte": lo, "$lt": hi}} for lo, hi in runs(sorted(hours))]}},
        {"$group": {"_id": {"page": "$path", "status": "$status", **_hour_parts()},
                    "hits": {"$sum": 1}, "bytes": {"$sum": "$bytes"}}},
    ]
    for row in db[schema.EVENTS].aggregate(pipeline):
        key = row["_id"]
        yield _hour_start(key), key["page"], key["status"], row["hits"], row["bytes"]


def grouped(db, site: str, start: dt.datetime, end: dt.datetime, fields: Sequence[str],
            page: str | None = None) -> Iterator[tuple[dict, int]]:
    """``(key, hits)`` per distinct ``fields`` (short names of ``FIELDS``) among the
    site's events of [start, end), one ``page``'s if given: the work of a breakdown
    then grows with distinct requests, not with hits."""
    match = {"site": site, "time": {"$gte": start, "$lt": end}}
    if page is not None:
        match["path"] = page
    pipeline = [{"$match": match},
                {"$group": {"_id": {f: f"${FIELDS[f]}" for f in fields}, "n": {"$sum": 1}}}]
    for row in db[schema.EVENTS].aggregate(pipeline):
        yield row["_id"], row["n"]


def count(db, site: str, start: dt.datetime, end: dt.datetime) -> int:
    """The site's events of [start, end) (an index count: no document is read)."""
    return db[schema.EVENTS].count_documents(
        {"site": site, "time": {"$gte": start, "$lt": end}})


def waiting(db, since: dt.datetime | None) -> int:
    """Events ingested at or after ``since`` (all of them when None): what the next
    rollup run reads."""
    return db[schema.EVENTS].count_documents({"ingested": {"$gte": since}} if since else {})


def newest_clients(db, site: str, start: dt.datetime, end: dt.datetime,
                   limit: int) -> Iterator[tuple[str | None, str | None]]:
    """``(address, agent)`` of the site's events of [start, end], newest first, at most
    ``limit``: a bounded read through the site/time index however busy the site."""
    found = db[schema.EVENTS].find(
        {"site": site, "time": {"$gte": start, "$lte": end}},
        {"_id": 0, "host": 1, "user_agent": 1}, sort=[("time", -1)], limit=limit)
    for doc in found:
        yield doc.get("host"), doc.get("user_agent")


def runs(hours: list[dt.datetime]) -> list[tuple[dt.datetime, dt.datetime]]:
    """Sorted hours → ``[start, end)`` ranges of consecutive hours."""
    out: list[list[dt.datetime]] = []
    for hour in hours:
        if out and out[-1][1] == hour:
            out[-1][1] = hour + _HOUR
        else:
            out.append([hour, hour + _HOUR])
    return [(lo, hi) for lo, hi in out]


def _hour_parts() -> dict:
    return {"y": {"$year": "$time"}, "m": {"$month": "$time"},
            "d": {"$dayOfMonth": "$time"}, "h": {"$hour": "$time"}}


def _hour_start(parts: dict) -> dt.datetime:
    return dt.datetime(parts["y"], parts["m"], parts["d"], parts["h"], tzinfo=dt.UTC)
