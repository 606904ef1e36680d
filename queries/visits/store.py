"""Where visits live: one document per site and UTC day (``visits.daily``), an hour's
visits a sub-document of it, replaced whole whenever the hour is recomputed.

    {_id: "<site>|<YYYYMMDD>", site, day,
     hours: {"<H>": {q: [[quarter, visits, bounces, duration ms, views, pageviews], ...],
                     entry: [[quarter, page, visits, bounces, duration ms], ...],
                     exit: [...same...], views: [[quarter, page, pageviews], ...]}},
     backfilled: {"<H>": ...the same, for history the load generator wrote without
                  events}}

``quarter`` is 0-3 within the hour. Pages are array items, not keys, so a path with
dots or a ``$`` is stored as it is. An hour holds at most ``sessions.MAX_PAGES`` pages
per list; the pages with the fewest visits (pageviews) past them are summed under
``(other)``. Setting ``hours.H`` whole (never ``$inc``) is what makes a recompute
repeatable: writing the same hour twice leaves the same document.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator

from pymongo import ASCENDING, UpdateOne

from ..stats import schema
from .sessions import HOUR_MS, MAX_PAGES, OTHER_PAGE, QUARTER_MS

VISITS = "visits.daily"
DAY_MS = 24 * HOUR_MS
FIELDS = ("hours", "backfilled")     # events' visits; the backfilled history's


def ensure_visit_indexes(db) -> list[str]:
    return [db[VISITS].create_index([("site", ASCENDING), ("day", ASCENDING)],
                                    name="site_day")]


def day_id(site: str, day_ms: int) -> str:
    return f"{site}|{schema.from_epoch_ms(day_ms):%Y%m%d}"


def hour_parts(quarters: dict[int, list[int]], pages: dict[str, dict],
               hours: Iterable[int]) -> dict[int, dict]:
    """``sessions.tally``'s output cut into the stored sub-document of each of ``hours``
    (hour starts, ms); an hour without visits or pageviews gets ``{}``."""
    parts: dict[int, dict] = {hour: {} for hour in hours}
    for q, row in quarters.items():
        part = parts.get(q - q % HOUR_MS)
        if part is not None:
            part.setdefault("q", []).append([(q % HOUR_MS) // QUARTER_MS, *row])
    for kind, cells in pages.items():
        by_hour: dict[int, list] = {}
        for (q, page), counts in cells.items():
            hour = q - q % HOUR_MS
            if hour in parts:
                by_hour.setdefault(hour, []).append([(q % HOUR_MS) // QUARTER_MS, page,
                                                     *counts])
        for hour, rows in by_hour.items():
            parts[hour][kind] = _capped(rows)
    for part in parts.values():
        if "q" in part:
            part["q"].sort()
    return parts


def _capped(rows: list[list]) -> list[list]:
    """The rows of the ``MAX_PAGES`` pages with the most visits (pageviews), the rest
    summed per quarter under ``(other)``."""
    totals: dict[str, int] = {}
    for row in rows:
        totals[row[1]] = totals.get(row[1], 0) + row[2]
    if len(totals) <= MAX_PAGES:
        return sorted(rows)
    kept = set(sorted(totals, key=lambda page: (-totals[page], page))[:MAX_PAGES])
    out, other = [], {}
    for row in rows:
        if row[1] in kept:
            out.append(row)
            continue
        summed = other.setdefault(row[0], [row[0], OTHER_PAGE] + [0] * (len(row) - 2))
        for i in range(2, len(row)):
            summed[i] += row[i]
    return sorted(out + list(other.values()))


def write_hours(db, site: str, parts: dict[int, dict], field: str = "hours") -> int:
    """Replace each hour of ``parts`` (hour start ms → sub-document; ``{}`` removes it)
    in its day's document: one update per day. Returns the days written."""
    by_day: dict[int, dict[int, dict]] = {}
    for hour, part in parts.items():
        by_day.setdefault(hour - hour % DAY_MS, {})[hour] = part
    requests = []
    for day, hours in sorted(by_day.items()):
        sets = {f"{field}.{(h - day) // HOUR_MS}": part for h, part in hours.items() if part}
        unsets = {f"{field}.{(h - day) // HOUR_MS}": "" for h, part in hours.items()
                  if not part}
        update: dict = {"$setOnInsert": {"site": site, "day": schema.from_epoch_ms(day)}}
        if sets:
            update["$set"] = sets
        if unsets:
            update["$unset"] = unsets
        requests.append(UpdateOne({"_id": day_id(site, day)}, update, upsert=True))
    if requests:
        db[VISITS].bulk_write(requests, ordered=False)
    return len(requests)


def days(db, site: str, start: dt.datetime, end: dt.datetime) -> Iterator[dict]:
    """The site's day documents holding [start, end)."""
    first = schema.day_start(start)
    return db[VISITS].find({"site": site, "day": {"$gte": first, "$lt": end}},
                           sort=[("day", ASCENDING)])


def hours_of(doc: dict) -> Iterator[tuple[int, dict]]:
    """``(hour start ms, sub-document)`` of a day document, both fields."""
    day = schema.epoch_ms(doc["day"] if doc["day"].tzinfo else
                          doc["day"].replace(tzinfo=dt.UTC))
    for name in FIELDS:
        for hour, part in (doc.get(name) or {}).items():
            yield day + int(hour) * HOUR_MS, part
