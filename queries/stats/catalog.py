"""What is known: sites, their pages, and the most visited pages over a range."""

from __future__ import annotations

import datetime as dt

import pandas as pd

from .. import validation
from ..validation import WHOLE_SITE
from . import schema
from .series import bucket_edges, fetch_counts
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


def top_pages(db, site: str, start: dt.datetime, end: dt.datetime, n: int = 10,
              tz="UTC") -> pd.DataFrame:
    """The ``n`` pages with most hits in ``[start, end)`` (whole hours of ``tz``), most
    visited first: index ``page``, column ``hits``."""
    site = validation.site(site)
    start, end = validation.time_range(start, end)
    edges = bucket_edges(start, end, "hour", validation.timezone(tz))
    base = "hour" if all(e.minute == 0 for e in edges) else "minute"
    counts = fetch_counts(db, site, {"$ne": WHOLE_SITE}, base, edges[0], edges[-1])
    totals = counts.groupby("page")["hits"].sum().astype("int64")
    ranked = totals.sort_values(ascending=False, kind="stable").head(max(int(n), 0))
    return ranked.rename("hits").rename_axis("page").to_frame()
