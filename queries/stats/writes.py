"""The writes of MongoDB's pre-aggregated reports use case: the direct one (one ``$inc``
upsert per document per hit, the reference), the recorder's coalesced increments, and
pre-allocation, and what a recorder reports of them."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from .. import validation
from ..validation import WHOLE_SITE
from . import schema


def targets(page: str) -> tuple[str, ...]:
    """The pages a hit counts for: itself and the whole site."""
    return (WHOLE_SITE,) if page == WHOLE_SITE else (page, WHOLE_SITE)


@dataclass
class Increment:
    """One stats document's coalesced ``$inc``, as the recorder writes it in a flush."""

    collection: str
    metadata: dict
    inc: dict[str, int] = field(default_factory=dict)
    sets: dict = field(default_factory=dict)    # fields ``$set`` beside the guard


def day_unit(names: tuple[str, str], ts: dt.datetime) -> tuple[tuple, int]:
    """A hit's pending unit, (site, page, UTC day), and its minute of that day: the
    recorder's pending format (what :func:`increments` takes), which tallies made apart
    from it use too."""
    return (*names, ts.year, ts.month, ts.day), ts.hour * 60 + ts.minute


def increments(pending: dict[tuple, dict[int, int]],
               bots: dict[tuple, dict[int, int]] | None = None
               ) -> dict[tuple[str, str], Increment]:
    """The ``$inc`` of every document touched by minute counts ``{(site, page, year,
    month, day): {minute of the UTC day: hits}}``, keyed by (collection, _id), with the
    bot hits among them (``bots``, same format, same or fewer keys): ``schema.BOTS``.
    Every document's bot counter is incremented, by 0 without bots: it says that the
    document's bots are counted apart. The whole site's documents are made once per day
    from its pages' minutes summed (the ``$inc`` is linear in them), not path by path."""
    docs: dict[tuple[str, str], Increment] = {}
    bots = bots or {}
    site_days: dict[tuple, tuple[dict[int, int], dict[int, int]]] = {}
    for key, minutes in pending.items():
        site, page, year, month, day = key
        bot_minutes = bots.get(key)
        if page != WHOLE_SITE:
            _add_day(docs, site, page, (year, month, day), minutes, bot_minutes)
        whole = site_days.get((site, year, month, day))
        if whole is None:
            whole = site_days[(site, year, month, day)] = ({}, {})
        sum_minutes(whole[0], minutes)
        if bot_minutes:
            sum_minutes(whole[1], bot_minutes)
    for (site, *ymd), (minutes, bot_minutes) in site_days.items():
        _add_day(docs, site, WHOLE_SITE, ymd, minutes, bot_minutes)
    return docs


def sum_minutes(into: dict[int, int], minutes: dict[int, int]) -> None:
    """Add ``{minute: hits}`` into ``into``."""
    get = into.get
    for minute, n in minutes.items():
        into[minute] = get(minute, 0) + n


def _add_day(docs: dict, site: str, page: str, ymd, minutes: dict[int, int],
             bot_minutes: dict[int, int] | None) -> None:
    """One page's (or the whole site's) day of minutes: its daily document's ``$inc``
    (one unit a day: never merged) and its share of the monthly document's."""
    year, month, day = ymd
    date = dt.datetime(year, month, day, tzinfo=dt.UTC)
    daily = schema.day_increments(minutes)
    monthly = {"monthly": daily["daily"], f"daily.{day}": daily["daily"]}
    if bot_minutes:
        daily.update(schema.day_increments(bot_minutes, schema.BOTS))
        bot_total = daily[f"{schema.BOTS}.daily"]
        monthly[f"{schema.BOTS}.monthly"] = bot_total
        monthly[f"{schema.BOTS}.daily.{day}"] = bot_total
    else:
        daily[f"{schema.BOTS}.daily"] = 0
        monthly[f"{schema.BOTS}.monthly"] = 0
    docs[(schema.DAILY, schema.daily_id(date, site, page))] = Increment(
        schema.DAILY, schema.metadata(date, site, page), daily)
    first = date.replace(day=1)
    key = (schema.MONTHLY, schema.monthly_id(first, site, page))
    found = docs.get(key)
    if found is None:
        docs[key] = Increment(schema.MONTHLY, schema.metadata(first, site, page), monthly)
        return
    counts = found.inc
    for path, n in monthly.items():
        counts[path] = counts.get(path, 0) + n


def log_hit(db, ts: dt.datetime, site: str, page: str, bot: bool = False) -> None:
    """Count one hit the use case's way: two ``$inc`` upserts (daily and monthly document) for
    the page and two for the whole site. The reference the recorder must equal."""
    ts = validation.timestamp(ts)
    site, page = validation.site(site), validation.page(page)
    day, month = schema.day_start(ts), schema.month_start(ts)
    minute = {ts.hour * 60 + ts.minute: 1}
    daily = {**schema.daily_increments(ts),
             **schema.day_increments(minute if bot else {}, schema.BOTS)}
    monthly = {**schema.monthly_increments(ts),
               **schema.monthly_increments(ts, int(bot), schema.BOTS)}
    if not bot:
        del monthly[f"{schema.BOTS}.daily.{ts.day}"]
    for target in targets(page):
        db[schema.DAILY].update_one(
            {"_id": schema.daily_id(day, site, target)},
            {"$inc": daily,
             "$setOnInsert": {"metadata": schema.metadata(day, site, target)}},
            upsert=True,
        )
        db[schema.MONTHLY].update_one(
            {"_id": schema.monthly_id(month, site, target)},
            {"$inc": monthly,
             "$setOnInsert": {"metadata": schema.metadata(month, site, target)}},
            upsert=True,
        )


def preallocate(db, day: dt.datetime | dt.date, site: str, page: str) -> None:
    """Create the zero-filled daily and monthly documents of ``day`` for the page and the
    whole site, so later ``$inc``s never grow them. Existing counts are never touched."""
    if not isinstance(day, dt.datetime):
        day = dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)
    day = schema.day_start(validation.timestamp(day))
    site, page = validation.site(site), validation.page(page)
    for target in targets(page):
        for doc, coll in ((schema.zero_daily(day, site, target), schema.DAILY),
                          (schema.zero_monthly(schema.month_start(day), site, target),
                           schema.MONTHLY)):
            doc_id = doc.pop("_id")
            db[coll].update_one({"_id": doc_id}, {"$setOnInsert": doc}, upsert=True)


@dataclass(frozen=True)
class RecorderStatus:
    """What :meth:`HitRecorder.status` reports: counters since the recorder started, what
    waits in memory, and the last flush's latency and error (a fresh recorder: zeros)."""

    hits_accepted: int = 0
    hits_written: int = 0
    documents_written: int = 0
    flushes: int = 0
    db_operations: int = 0
    round_trips: int = 0
    failures: int = 0
    refused: int = 0
    backpressure_flushes: int = 0
    pending_documents: int = 0
    pending_hits: int = 0
    last_flush_latency_s: float = 0.0
    last_error: str = ""
