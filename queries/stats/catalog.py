"""What is known: sites, their pages, and the most visited pages over a range."""

from __future__ import annotations

import datetime as dt

import pandas as pd

from .. import validation
from ..validation import WHOLE_SITE
from . import schema
from .series import fetch_counts, part_counts
from .sites import synthetic_sites


def list_sites(db, include_synthetic: bool = True) -> list[str]:
    """Sites with statistics; ``include_synthetic=False`` leaves out the load generator's."""
    sites = set(db[schema.MONTHLY].distinct("metadata.site"))
    if not include_synthetic:
        sites -= set(synthetic_sites(db))
    return sorted(sites)


def recent_sites(db, include_synthetic: bool = True) -> list[str]:
    """Sites with statistics, the most recently active first: real sites before
    synthetic ones (the load generator's), each group by its last month, then name."""
    last: dict[str, dt.datetime] = {}
    for doc in db[schema.MONTHLY].find({"metadata.page": WHOLE_SITE}, {"metadata": 1}):
        site, date = doc["metadata"]["site"], validation.stored_time(doc["metadata"]["date"])
        last[site] = max(last.get(site, date), date)
    synthetic = set(synthetic_sites(db))
    if not include_synthetic:
        last = {site: date for site, date in last.items() if site not in synthetic}
    return sorted(last, key=lambda site: (site in synthetic, -last[site].timestamp(), site))


def site_span(db, site: str) -> tuple[dt.datetime, dt.datetime] | None:
    """The UTC minutes of the site's first and last hits, None without any: two reads of
    the ``(site, page, date)`` index, whatever the site holds. Minutes, not days: the
    local days holding hits in a zone are those of these two instants (a UTC day
    straddles two local days everywhere but UTC)."""
    first = _edge_minute(db, site, 1)
    return None if first is None else (first, _edge_minute(db, site, -1))


def last_hit(db, site: str) -> dt.datetime | None:
    """The UTC minute of the site's last hit, None without any."""
    return _edge_minute(db, site, -1)


def _edge_minute(db, site: str, order: int) -> dt.datetime | None:
    """The UTC minute of the site's first (``order`` 1) or last (-1) hit: the first or
    newest day whose whole-site counter holds hits, then that day's first or last hour
    and minute holding some."""
    site = validation.site(site)
    query = {"metadata.site": site, "metadata.page": WHOLE_SITE, "daily": {"$gt": 0}}
    doc = next(iter(db[schema.DAILY].find(query, {"metadata": 1, "hourly": 1, "minute": 1})
                    .sort("metadata.date", order).limit(1)), None)
    if doc is None:
        return None
    day = validation.stored_time(doc["metadata"]["date"])
    pick = min if order == 1 else max
    hour = _edge_key(doc.get("hourly"), pick)
    if hour is None:
        return day
    minute = _edge_key((doc.get("minute") or {}).get(str(hour)), pick)
    return day + dt.timedelta(hours=hour, minutes=minute or 0)


def _edge_key(counters, pick) -> int | None:
    """The smallest or largest (``pick``) hour or minute of ``counters`` (``{"H": n}``)
    holding a hit."""
    held = [int(key) for key, n in (counters or {}).items() if n]
    return pick(held) if held else None


def list_pages(db, site: str) -> list[str]:
    site = validation.site(site)
    pages = db[schema.MONTHLY].distinct("metadata.page", {"metadata.site": site})
    return sorted(p for p in pages if p != WHOLE_SITE)


def first_pages(db, site: str, n: int = 50) -> list[str]:
    """The site's first ``n`` pages by name, as ``list_pages()[:n]``, read from the
    ``(site, page, date)`` index in name order a chunk at a time: the page dropdown of
    every view offers 50 pages, and a site a beacon flood gave 10,000 would otherwise
    have all of them read and sorted for it."""
    site = validation.site(site)
    found: list[str] = []
    after, chunk = WHOLE_SITE, 2 * max(n, 1)      # pages start with "/", after "*"
    while len(found) < n:
        rows = list(db[schema.MONTHLY].find(
            {"metadata.site": site, "metadata.page": {"$gt": after}},
            {"_id": 0, "metadata.page": 1}).sort("metadata.page", 1).limit(chunk))
        for row in rows:
            if row["metadata"]["page"] != after:      # a page's months come in a row
                after = row["metadata"]["page"]
                found.append(after)
        if len(rows) < chunk:
            break
        chunk = min(2 * chunk, 10_000)
    return found[:n]


def top_pages(db, site: str, start: dt.datetime, end: dt.datetime, n: int = 10
              ) -> pd.DataFrame:
    """The ``n`` pages with most hits in ``[start, end)``, most visited first: index
    ``page``, column ``hits``. To the minute, the counters' finest unit (``start``
    floored, ``end`` raised to a whole minute), each part from the coarsest counters
    that cover it whole: the UTC days inside from the monthly documents' ``daily.D``
    (a year: a document per page and month instead of one per page and day), the hours
    of a partial day from the hourly counters, the minutes of a partial hour at either
    end from the minute counters, so "the last 5 minutes" counts 5 minutes, not their
    hour."""
    site = validation.site(site)
    start, end = validation.time_range(start, end)
    parts = _parts(_minute(start), _minute(end, up=True))
    pages = {"$ne": WHOLE_SITE}
    counts = pd.concat([*(fetch_counts(db, site, pages, "day", lo, hi)
                          for base, lo, hi in parts if base == "day"),
                        part_counts(db, site, pages, [p for p in parts if p[0] != "day"])])
    totals = counts.groupby("page")["hits"].sum().astype("int64")
    ranked = totals.sort_values(ascending=False, kind="stable").head(max(int(n), 0))
    return ranked.rename("hits").rename_axis("page").to_frame()


def _parts(first: dt.datetime, last: dt.datetime) -> list[tuple[str, dt.datetime, dt.datetime]]:
    """``[first, last)`` (whole minutes) cut into (base, lo, hi): whole UTC days, then
    whole hours, then minutes, each part non-empty."""
    hours = (_hour(first, up=True), _hour(last))
    if hours[0] >= hours[1]:
        return [("minute", first, last)]
    days = (_day(hours[0], up=True), _day(hours[1]))
    middle = ([("hour", hours[0], days[0]), ("day", *days), ("hour", days[1], hours[1])]
              if days[0] < days[1] else [("hour", *hours)])
    parts = [("minute", first, hours[0]), *middle, ("minute", hours[1], last)]
    return [(base, lo, hi) for base, lo, hi in parts if lo < hi] or [("minute", first, last)]


def _day(t: dt.datetime, up: bool = False) -> dt.datetime:
    floor = t.replace(hour=0, minute=0, second=0, microsecond=0)
    return floor + dt.timedelta(days=1) if up and floor < t else floor


def _minute(t: dt.datetime, up: bool = False) -> dt.datetime:
    floor = t.replace(second=0, microsecond=0)
    return floor + dt.timedelta(minutes=1) if up and floor < t else floor


def _hour(t: dt.datetime, up: bool = False) -> dt.datetime:
    floor = t.replace(minute=0, second=0, microsecond=0)
    return floor + dt.timedelta(hours=1) if up and floor < t else floor
