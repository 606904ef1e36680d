"""Where visits live: one document per site and UTC day (``visits.daily``), each hour's
visits replaced whole whenever the hour is recomputed, and the day's pages summed.

    {_id: "<site>|<YYYYMMDD>", site, day, ver,
     q:     {"<H>": [[quarter, visits, bounces, duration ms, views, pageviews], ...]},
     entry: {"<H>": [[quarter, page, visits, bounces, duration ms], ...]},
     exit:  {"<H>": ...the same...},
     views: {"<H>": [[quarter, page, pageviews], ...]},
     ev:    {"<H>": [[quarter, name, dim, value, events, revenue, sketch], ...]},
     b:     {q: ..., entry: ..., exit: ..., views: ..., ev: ...}   (the backfilled history's)
     sums:  {entry: [[page, visits, bounces, duration ms], ...], exit: ...,
             views: [[page, pageviews], ...],               (the whole day's, both parts)
             ev: [[name, dim, value, events, revenue, sketch], ...]}}

``ev`` are the custom events of the hour (``cells``), counted in the same
pass as the visits they un-bounce, and summed per day and month (their sketches united).

``quarter`` is 0-3 within the hour. Pages are array items, not keys, so a path with dots
or a ``$`` is stored as it is. An hour holds at most ``sessions.MAX_PAGES`` pages per
list; the pages with the fewest visits (pageviews) past them are summed under
``(other)``. Setting an hour whole (never ``$inc``) is what makes a recompute
repeatable: writing the same hour twice leaves the same document.

Each kind is a field of its own, so a read takes only what it needs (a year of visits
per day reads the ``q`` rows alone), and ``sums`` lets a range's whole days read a row
per page rather than one per page and quarter. A writer increments ``ver`` with its
hours, then sums the day it reads and sets ``sums`` only if ``ver`` is still what it
read: of two writers of one day, the last always leaves the sums of every hour.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator

from pymongo import ASCENDING, ReturnDocument, UpdateOne

from ..stats import schema
from . import cells
from .sessions import HOUR_MS, MAX_PAGES, OTHER_PAGE, QUARTER_MS

VISITS = "visits.daily"
MONTHS = "visits.monthly"     # {_id: "<site>|<YYYYMM>", site, month, ver, sums}
DAY_MS = 24 * HOUR_MS
KINDS = ("q", "entry", "exit", "views", "ev")
PAGE_KINDS = ("entry", "exit", "views")
EVENTS = "ev"
BACKFILLED = "b"        # the prefix of the backfilled history's fields
_FRAME_FROM = 256       # rows from which pages are summed in a Polars frame


def ensure_visit_indexes(db) -> list[str]:
    return [db[VISITS].create_index([("site", ASCENDING), ("day", ASCENDING)],
                                    name="site_day"),
            db[MONTHS].create_index([("site", ASCENDING), ("month", ASCENDING)],
                                    name="site_month")]


def day_id(site: str, day_ms: int) -> str:
    return f"{site}|{schema.from_epoch_ms(day_ms):%Y%m%d}"


def hour_parts(quarters: dict[int, list[int]], pages: dict[str, dict],
               hours: Iterable[int], events: dict | None = None) -> dict[int, dict]:
    """``sessions.tally``'s output (and ``cells.tally``'s, ``events``) cut into each
    of ``hours`` (hour starts, ms): per kind, the hour's rows (an hour without visits,
    pageviews or events gets ``{}``)."""
    parts: dict[int, dict] = {hour: {} for hour in hours}
    _add_events(parts, events or {})
    for q, row in quarters.items():
        part = parts.get(q - q % HOUR_MS)
        if part is not None:
            part.setdefault("q", []).append([(q % HOUR_MS) // QUARTER_MS, *row])
    for kind, found in pages.items():
        by_hour = {}
        for (q, page), counts in found.items():
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


def _add_events(parts: dict[int, dict], events: dict) -> None:
    """Custom event cells (``(quarter start ms, name, dim, value)`` → ``Cell``) as the
    rows of their hours, each hour within the caps."""
    by_hour: dict[int, dict] = {}
    for (q, *key), cell in events.items():
        if q - q % HOUR_MS in parts:
            by_hour.setdefault(q - q % HOUR_MS, {})[((q % HOUR_MS) // QUARTER_MS, *key)] = cell
    for hour, found in by_hour.items():
        parts[hour][EVENTS] = sorted(cells.to_row(key, cell) for key, cell
                                     in cells.capped(found, MAX_PAGES).items())


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


def write_hours(db, site: str, parts: dict[int, dict], backfilled: bool = False
                ) -> set[int]:
    """Replace each hour of ``parts`` (hour start ms → rows per kind; ``{}`` removes
    the hour) in its day's document. Returns the days written (start ms), whose sums
    the caller refreshes (``refresh_sums``) once it has written all it will."""
    prefix = f"{BACKFILLED}." if backfilled else ""
    by_day: dict[int, dict[int, dict]] = {}
    for hour, part in parts.items():
        by_day.setdefault(hour - hour % DAY_MS, {})[hour] = part
    requests = []
    for day, hours in sorted(by_day.items()):
        sets, unsets = {}, {}
        for hour, part in hours.items():
            for kind in KINDS:
                path = f"{prefix}{kind}.{(hour - day) // HOUR_MS}"
                if part.get(kind):
                    sets[path] = part[kind]
                else:
                    unsets[path] = ""
        update: dict = {"$setOnInsert": {"site": site, "day": schema.from_epoch_ms(day)},
                        "$inc": {"ver": 1}}
        if sets:
            update["$set"] = sets
        if unsets:
            update["$unset"] = unsets
        requests.append(UpdateOne({"_id": day_id(site, day)}, update, upsert=True))
    if requests:
        db[VISITS].bulk_write(requests, ordered=False)
    return set(by_day)


def refresh_sums(db, site: str, days: Iterable[int]) -> None:
    """The page sums of ``days`` (start ms), then of their months."""
    days = sorted(days)
    for day in days:
        _sum_day(db, day_id(site, day))
    for month in sorted({_month_start(day) for day in days}):
        _sum_month(db, site, month)


def _sum_day(db, doc_id: str) -> None:
    """Set the day's page sums from its hours, unless another writer changed the day
    since this one read it (it sums the day itself, after its own change)."""
    doc = db[VISITS].find_one({"_id": doc_id}, {"q": 0, f"{BACKFILLED}.q": 0})
    if doc is None:
        return
    sources = (doc, doc.get(BACKFILLED) or {})
    sums = _summed((kind, found) for kind in PAGE_KINDS for source in sources
                   for found in _in_hour_order(source.get(kind)))
    sums[EVENTS] = _events_summed(row for source in sources
                                  for rows in _in_hour_order(source.get(EVENTS))
                                  for row in rows)
    db[VISITS].update_one({"_id": doc_id, "ver": doc.get("ver")}, {"$set": {"sums": sums}})


def _in_hour_order(hours: dict | None) -> list[list]:
    """A kind's rows per hour (``{"<H>": rows}``), hour by hour: sketches united in
    one order whatever order the writers set the hours in (a union's bytes follow it)."""
    return [hours[hour] for hour in sorted(hours or {}, key=int)]


def _sum_month(db, site: str, month: dt.datetime) -> None:
    """Set the month's page sums from its days' (the same rule: only if no writer
    changed the month since this one read its days)."""
    doc_id = f"{site}|{month:%Y%m}"
    ver = db[MONTHS].find_one_and_update(
        {"_id": doc_id}, {"$inc": {"ver": 1}, "$setOnInsert": {"site": site, "month": month}},
        upsert=True, return_document=ReturnDocument.AFTER, projection={"ver": 1})["ver"]
    following = (month + dt.timedelta(days=32)).replace(day=1)
    days = list(db[VISITS].find({"site": site, "day": {"$gte": month, "$lt": following}},
                                {"sums": 1}, sort=[("day", ASCENDING)]))
    sums = _summed(((kind, rows) for doc in days
                    for kind, rows in (doc.get("sums") or {}).items() if kind != EVENTS),
                   quartered=False)
    sums[EVENTS] = _events_summed(row for doc in days
                                  for row in (doc.get("sums") or {}).get(EVENTS, ()))
    db[MONTHS].update_one({"_id": doc_id, "ver": ver}, {"$set": {"sums": sums}})


def _summed(kinds_rows: Iterable[tuple[str, list]], quartered: bool = True
            ) -> dict[str, list]:
    """Per kind, ``[page, *numbers]`` summed over ``(kind, [[quarter, page, *numbers],
    ...])`` pairs, by page (``quartered`` False: rows without their quarter)."""
    gathered: dict[str, list] = {kind: [] for kind in PAGE_KINDS}
    for kind, rows in kinds_rows:
        gathered[kind].extend(rows)
    return {kind: _page_sums(rows, 1 if quartered else 0) for kind, rows in gathered.items()}


def _page_sums(rows: list[list], at: int) -> list[list]:
    """Rows ``[..., page, *numbers]`` (the page at ``at``) summed by page, sorted by
    page: in one Polars group-by, or in Python for a few rows or pages a frame does not
    hold."""
    if len(rows) >= _FRAME_FROM:
        import polars as pl  # ~40 MB: only in a process that sums visits

        columns = list(zip(*rows, strict=True))[at:]
        try:
            frame = pl.DataFrame([pl.Series("page", columns[0], dtype=pl.Utf8),
                                  *(pl.Series(f"n{i}", values, dtype=pl.Int64)
                                    for i, values in enumerate(columns[1:]))])
        except (pl.exceptions.PolarsError, TypeError, ValueError, OverflowError):
            pass
        else:
            summed = frame.group_by("page").agg(pl.all().sum()).sort("page")
            return [list(row) for row in summed.rows()]
    found: dict[str, list[int]] = {}
    for row in rows:
        page, numbers = row[at], row[at + 1:]
        summed = found.get(page)
        if summed is None:
            found[page] = list(numbers)
        else:
            for i, n in enumerate(numbers):
                summed[i] += n
    return sorted([page, *numbers] for page, numbers in found.items())


def _events_summed(rows: Iterable[list]) -> list[list]:
    """Custom event rows (with or without their quarter) summed per cell."""
    return sorted(cells.to_row(key, cell) for key, cell in cells.summed(rows).items())


def _month_start(day_ms: int) -> dt.datetime:
    return schema.from_epoch_ms(day_ms).replace(day=1)


def months(db, site: str, start: dt.datetime, end: dt.datetime, field: str = "sums"
           ) -> Iterator[dict]:
    """The site's month sums (``field``: one kind's, ``sums.<kind>``) of the months
    starting in [start, end)."""
    return db[MONTHS].find({"site": site, "month": {"$gte": start, "$lt": end}}, {field: 1})


def days(db, site: str, start: dt.datetime, end: dt.datetime, fields: Iterable[str]
         ) -> Iterator[dict]:
    """The site's day documents holding [start, end), with ``fields`` only."""
    first = schema.day_start(start)
    projection = {"day": 1, **{name: 1 for name in fields}}
    return db[VISITS].find({"site": site, "day": {"$gte": first, "$lt": end}}, projection,
                           sort=[("day", ASCENDING)])


def kind_fields(kind: str) -> tuple[str, str]:
    """The fields holding a kind's rows: the events' and the backfilled history's."""
    return kind, f"{BACKFILLED}.{kind}"


def hours_of(doc: dict, kind: str) -> Iterator[tuple[int, list]]:
    """``(hour start ms, rows)`` of one kind in a day document, both parts."""
    day = schema.epoch_ms(doc["day"])
    for source in (doc, doc.get(BACKFILLED) or {}):
        for hour, rows in (source.get(kind) or {}).items():
            yield day + int(hour) * HOUR_MS, rows
