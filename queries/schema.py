"""The storage contract of DESIGN.md: collection names, document ids and shapes, indexes."""

from __future__ import annotations

import calendar
import datetime as dt

from pymongo import ASCENDING

DAILY = "stats.daily"
MONTHLY = "stats.monthly"
EVENTS = "events"
SITES = "sites"
CHECKPOINTS = "checkpoints"
ROLLUP_LEVELS = ("hourly", "daily", "weekly", "monthly", "yearly")
ROLLUPS = {level: f"rollups.{level}" for level in ROLLUP_LEVELS}

STATS_INDEX = [("metadata.site", ASCENDING), ("metadata.page", ASCENDING),
               ("metadata.date", ASCENDING)]

# Bookkeeping field holding the tokens of the last recorder flushes applied to a stats
# document (see recorder.py); it is never read by charts.
FLUSHES = "flushes"


def day_start(ts: dt.datetime) -> dt.datetime:
    return dt.datetime(ts.year, ts.month, ts.day, tzinfo=dt.UTC)


def month_start(ts: dt.datetime) -> dt.datetime:
    return dt.datetime(ts.year, ts.month, 1, tzinfo=dt.UTC)


def _suffix(site: str, page: str) -> str:
    # The seed's strftime('%Y%m%d/') + site + page. Pages start with "/" (validation adds
    # one), so "site*" for the whole site can never equal a page's id.
    return f"{site}{page}"


def daily_id(day: dt.datetime, site: str, page: str) -> str:
    return f"{day:%Y%m%d}/{_suffix(site, page)}"


def monthly_id(month: dt.datetime, site: str, page: str) -> str:
    return f"{month:%Y%m}/{_suffix(site, page)}"


def metadata(date: dt.datetime, site: str, page: str) -> dict:
    return {"date": date, "site": site, "page": page}


def daily_increments(ts: dt.datetime, n: int = 1) -> dict[str, int]:
    return {"daily": n, f"hourly.{ts.hour}": n, f"minute.{ts.hour}.{ts.minute}": n}


def monthly_increments(ts: dt.datetime, n: int = 1) -> dict[str, int]:
    return {"monthly": n, f"daily.{ts.day}": n}


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


def ensure_indexes(db) -> list[str]:
    """Create the indexes charts rely on (idempotent); returns their names."""
    return [db[name].create_index(STATS_INDEX, name="site_page_date") for name in (DAILY, MONTHLY)]
