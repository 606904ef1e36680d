"""The most visited pages of a site over a range (``hitboard top``, the page
dropdown's ranking), from the coarsest exact counts that cover each part of it.

The UTC days that the rollups cover (before their settled watermark) come from their
buckets, a document per site and month or day with every page in it: a year is a
dozen documents. The rest, the edges of the range and the hours not rolled up yet, from
the statistics (``stats.catalog.top_pages``, to the minute). The rollups' days are used
only where their site total equals the statistics' (a store counting without raw
events has no rollups to stand for its hits); otherwise the statistics answer it all.
"""

from __future__ import annotations

import datetime as dt

import pandas as pd

from .. import validation
from ..rollups import reads as rollup_reads
from ..rollups.build import floor, next_start
from ..rollups.checks import covered_until
from ..stats import catalog
from ..stats.series import daily_series

ALL = 10**9
MIN_DAYS = 2        # fewer whole days than this: the statistics alone are as quick


def top_pages(db, site: str, start: dt.datetime, end: dt.datetime, n: int = 10
              ) -> pd.DataFrame:
    """As ``stats.catalog.top_pages``: index ``page``, column ``hits``, most first."""
    site = validation.site(site)
    start, end = validation.time_range(start, end)
    lo, hi = _rolled_days(db, start, end)
    if hi - lo < dt.timedelta(days=MIN_DAYS):
        return catalog.top_pages(db, site, start, end, n)
    pages, total = rollup_reads.page_totals(db, site, lo, hi)
    if total != int(daily_series(db, site, lo, hi)["*"].sum()):
        return catalog.top_pages(db, site, start, end, n)
    totals = pd.Series(pages, dtype="int64")
    for a, b in ((start, lo), (hi, end)):
        if a < b:
            totals = totals.add(catalog.top_pages(db, site, a, b, ALL)["hits"], fill_value=0)
    ranked = totals.astype("int64").sort_values(ascending=False, kind="stable")
    return ranked.head(max(int(n), 0)).rename("hits").rename_axis("page").to_frame()


def _rolled_days(db, start: dt.datetime, end: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    """The whole UTC days of ``[start, end)`` that the rollups cover (empty: lo == hi)."""
    covered = covered_until(db)
    lo = floor("daily", start)
    if lo < start:
        lo = next_start("daily", lo)
    if covered is None:
        return lo, lo
    return lo, max(lo, floor("daily", min(end, covered)))
