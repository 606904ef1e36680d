"""The direct writes of MongoDB's pre-aggregated reports use case: one ``$inc`` upsert
per document per hit, and pre-allocation."""

from __future__ import annotations

import datetime as dt

from .. import validation
from ..validation import WHOLE_SITE
from . import schema


def targets(page: str) -> tuple[str, ...]:
    """The pages a hit counts for: itself and the whole site."""
    return (WHOLE_SITE,) if page == WHOLE_SITE else (page, WHOLE_SITE)


def log_hit(db, ts: dt.datetime, site: str, page: str) -> None:
    """Count one hit the use case's way: two ``$inc`` upserts (daily and monthly document) for
    the page and two for the whole site. The reference the recorder must equal."""
    ts = validation.timestamp(ts)
    site, page = validation.site(site), validation.page(page)
    day, month = schema.day_start(ts), schema.month_start(ts)
    for target in targets(page):
        db[schema.DAILY].update_one(
            {"_id": schema.daily_id(day, site, target)},
            {"$inc": schema.daily_increments(ts),
             "$setOnInsert": {"metadata": schema.metadata(day, site, target)}},
            upsert=True,
        )
        db[schema.MONTHLY].update_one(
            {"_id": schema.monthly_id(month, site, target)},
            {"$inc": schema.monthly_increments(ts),
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
