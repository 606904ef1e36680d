"""The reads behind the Live and History charts with their default ranges, for the Data
page to explain: which representation answers each chart is named here, beside the read
doors that choose it (``live.py``, ``history.py``), never in the page."""

from __future__ import annotations

import datetime as dt

from ..dimensions.pages import ranked_pages
from ..stats.kpis import hit_totals
from ..stats.series import daily_series, hourly_series, minute_series
from .live import newest_hits, top_today

TOP_N = 10


def chart_queries(site: str, pages, tz: str, now: dt.datetime) -> list[tuple]:
    """(chart, read function, arguments, keyword arguments) of every chart the Live and
    History pages draw, with their default ranges; each read takes the database first."""
    month_ago, week_ago = now - dt.timedelta(days=30), now - dt.timedelta(days=7)
    return [
        ("Live · hits per minute", minute_series,
         (site, now - dt.timedelta(hours=1), now), {"pages": pages, "tz": tz}),
        ("Live · totals", hit_totals, (site, now), {"pages": pages, "tz": tz}),
        ("Live · top pages today", top_today, (site, now, tz), {}),
        ("Live · recent hits", newest_hits, (site, pages, 20), {}),
        ("History · hits per hour, 7 days", hourly_series, (site, week_ago, now),
         {"pages": pages, "tz": tz}),
        ("History · hits per day, 30 days", daily_series, (site, month_ago, now),
         {"pages": pages, "tz": tz}),
        ("History · top pages, 30 days", ranked_pages, (site, month_ago, now),
         {"n": TOP_N}),
    ]
