"""The storage contract (ARCHITECTURE.md, "Storage"): collection names, document ids and
shapes, after MongoDB's pre-aggregated reports use case."""

from __future__ import annotations

import calendar
import datetime as dt

from pymongo import ASCENDING

DAILY = "stats.daily"
MONTHLY = "stats.monthly"
EVENTS = "events.buckets"     # raw requests, in buckets (queries.events.buckets)
APART = "events.apart"        # the same, of hits a site's other source sent (queries.events.apart)
SITES = "sites"
CHECKPOINTS = "checkpoints"
ROLLUP_LEVELS = ("hourly", "daily", "weekly", "monthly", "yearly")
# One document per site and bucket (``queries.rollups.documents``).
ROLLUPS = {level: f"rollups.{level}" for level in ROLLUP_LEVELS}

STATS_INDEX = [("metadata.site", ASCENDING), ("metadata.page", ASCENDING),
               ("metadata.date", ASCENDING)]

# A stats document's bot hits, counted as its hits are beside them (``bots.daily``,
# ``bots.hourly.H``, ``bots.minute.H.M``; ``bots.monthly``, ``bots.daily.D``), so people
# are hits - bots at every granularity. Every flush increments ``bots.daily`` (monthly:
# ``bots.monthly``), by 0 if need be: a document without it was written before bots were
# counted here, and its bots count as people (reads say how many hits that concerns).
BOTS = "bots"

# Bookkeeping field of a stats document: per recorder, the number of its last flush
# applied to it (see queries/counting/engine.py); it is never read by charts.
FLUSHES = "flushes"


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_MS = dt.timedelta(milliseconds=1)


def epoch_ms(value: dt.datetime) -> int:
    """Milliseconds since the epoch, floored: what a BSON date holds (naive means UTC)."""
    return (value.replace(tzinfo=value.tzinfo or dt.UTC) - _EPOCH) // _MS


def from_epoch_ms(ms: int) -> dt.datetime:
    return _EPOCH + ms * _MS


def day_start(ts: dt.datetime) -> dt.datetime:
    return dt.datetime(ts.year, ts.month, ts.day, tzinfo=dt.UTC)


def month_start(ts: dt.datetime) -> dt.datetime:
    return dt.datetime(ts.year, ts.month, 1, tzinfo=dt.UTC)


def _suffix(site: str, page: str) -> str:
    # The use case's strftime('%Y%m%d/') + site + page. Pages start with "/" (validation adds
    # one), so "site*" for the whole site can never equal a page's id.
    return f"{site}{page}"


def daily_id(day: dt.datetime, site: str, page: str) -> str:
    # strftime('%Y%m%d/'), spelt out: a flush names ~100,000 ids, and strftime is ~10x slower.
    return f"{day.year:04d}{day.month:02d}{day.day:02d}/{_suffix(site, page)}"


def monthly_id(month: dt.datetime, site: str, page: str) -> str:
    return f"{month.year:04d}{month.month:02d}/{_suffix(site, page)}"


def metadata(date: dt.datetime, site: str, page: str) -> dict:
    return {"date": date, "site": site, "page": page}


def daily_increments(ts: dt.datetime, n: int = 1) -> dict[str, int]:
    return {"daily": n, f"hourly.{ts.hour}": n, f"minute.{ts.hour}.{ts.minute}": n}


# The field paths of a daily document's counters, by minute of the UTC day and by hour:
# a flush names hundreds of thousands of them.
_MINUTE_PATHS = [f"minute.{m // 60}.{m % 60}" for m in range(1440)]
_HOUR_PATHS = [f"hourly.{h}" for h in range(24)]
_PATHS = {"": (_MINUTE_PATHS, _HOUR_PATHS, "daily"),
          BOTS: ([f"{BOTS}.{p}" for p in _MINUTE_PATHS], [f"{BOTS}.{p}" for p in _HOUR_PATHS],
                 f"{BOTS}.daily")}


def day_increments(minutes: dict[int, int], of: str = "") -> dict[str, int]:
    """The daily document's ``$inc`` for ``{minute of the UTC day: hits}``; ``of=BOTS``:
    for its bot hits."""
    minute_paths, hour_paths, daily = _PATHS[of]
    inc: dict[str, int] = {}
    hourly: dict[int, int] = {}
    for minute, hits in minutes.items():
        inc[minute_paths[minute]] = hits
        hour = minute // 60
        hourly[hour] = hourly.get(hour, 0) + hits
    for hour, hits in hourly.items():
        inc[hour_paths[hour]] = hits
    inc[daily] = sum(hourly.values())
    return inc


def monthly_increments(ts: dt.datetime, n: int = 1, of: str = "") -> dict[str, int]:
    prefix = f"{of}." if of else ""
    return {f"{prefix}monthly": n, f"{prefix}daily.{ts.day}": n}


def zero_daily(day: dt.datetime, site: str, page: str) -> dict:
    return {
        "_id": daily_id(day, site, page),
        "metadata": metadata(day, site, page),
        "daily": 0,
        "hourly": {str(h): 0 for h in range(24)},
        "minute": {str(h): {str(m): 0 for m in range(60)} for h in range(24)},
    }


def zero_monthly(month: dt.datetime, site: str, page: str) -> dict:
    days = calendar.monthrange(month.year, month.month)[1]
    return {
        "_id": monthly_id(month, site, page),
        "metadata": metadata(month, site, page),
        "monthly": 0,
        "daily": {str(d): 0 for d in range(1, days + 1)},
    }


def describe_indexes(db) -> list[tuple[str, str, list[tuple[str, int]]]]:
    """Every index of every collection: (collection, index name, keys), sorted."""
    rows = []
    for coll in sorted(db.list_collection_names()):
        for name, info in sorted(db[coll].index_information().items()):
            rows.append((coll, name, [tuple(pair) for pair in info["key"]]))
    return rows
