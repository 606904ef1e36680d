"""What is known: sites, their pages, and the most visited pages over a range."""

from __future__ import annotations

import datetime as dt

import pandas as pd

from .. import validation
from ..validation import WHOLE_SITE
from . import schema
from .series import fetch_counts
from .sites import synthetic_sites


def list_sites(db, include_synthetic: bool = True) -> list[str]:
    """Sites with statistics; ``include_synthetic=False`` leaves out the load generator's."""
    sites = set(db[schema.MONTHLY].distinct("metadata.site"))
    if not include_synthetic:
        sites -= set(synthetic_sites(db))
    return sorted(sites)


def list_pages(db, site: str) -> list[str]:
    site = validation.site(site)
    pages = db[schema.MONTHLY].distinct("metadata.page", {"metadata.site": site})
    return sorted(p for p in pages if p != WHOLE_SITE)


def top_pages(db, site: str, start: dt.datetime, end: dt.datetime, n: int = 10
              ) -> pd.DataFrame:
    """The ``n`` pages with most hits in ``[start, end)``, most visited first: index
    ``page``, column ``hits``. To the minute, the counters' finest unit (``start``
    floored, ``end`` raised to a whole minute): the whole UTC hours inside from the
    hourly counters, the minutes of a partial hour at either end from the minute
    counters, so "the last 5 minutes" counts 5 minutes, not their hour."""
    site = validation.site(site)
    start, end = validation.time_range(start, end)
    first, last = _minute(start), _minute(end, up=True)
    hours = (_hour(first, up=True), _hour(last))
    if hours[0] < hours[1]:
        parts = [("minute", first, hours[0]), ("hour", *hours), ("minute", hours[1], last)]
    else:
        parts = [("minute", first, last)]
    counts = pd.concat([fetch_counts(db, site, {"$ne": WHOLE_SITE}, base, lo, hi)
                        for base, lo, hi in parts if lo < hi])
    totals = counts.groupby("page")["hits"].sum().astype("int64")
    ranked = totals.sort_values(ascending=False, kind="stable").head(max(int(n), 0))
    return ranked.rename("hits").rename_axis("page").to_frame()


def _minute(t: dt.datetime, up: bool = False) -> dt.datetime:
    floor = t.replace(second=0, microsecond=0)
    return floor + dt.timedelta(minutes=1) if up and floor < t else floor


def _hour(t: dt.datetime, up: bool = False) -> dt.datetime:
    floor = t.replace(minute=0, second=0, microsecond=0)
    return floor + dt.timedelta(hours=1) if up and floor < t else floor
