"""Hits of one dimension's value per hour or day of a zone (``referrer =
news.example``), from the counters: History's chart under a filter, for any range.

Each bucket counts exactly its part of the range (``spans``): its whole UTC hours from
the counter documents (whole UTC days from the daily ones), the parts of hours its edges
cut (every hour of a zone half an hour off UTC) from the raw events; where those are
gone, the nearest whole hours stand in, the same for the two buckets that share an edge,
so no hit is counted twice, and ``attrs["exact"]`` is false.
"""

from __future__ import annotations

import datetime as dt

import pandas as pd

from .. import validation
from . import sketches
from .counted import pieces, projection, unsplit_bots
from .counters import DAILY, HOURLY, MONTHLY
from .encoding import dimension, escape
from .page_reads import event_values
from .spans import bucket_covers


def filtered_series(db, site: str, by: str, value: str, start, end,
                    granularity: str = "day", tz="UTC", humans: bool = False,
                    now: dt.datetime | None = None) -> pd.DataFrame:
    """Hits per hour or day of ``tz`` of the hits whose ``by`` is ``value`` in [start,
    end): index ``time``, column ``hits``; bots left out if ``humans``
    (``attrs["unsplit"]``: old bot hits that could not be)."""
    dimension(by)
    if granularity not in ("hour", "day"):
        raise validation.InvalidRangeError("a filtered series comes per hour or per day")
    site = validation.site(site)
    edges, found = bucket_covers(db, site, start, end, granularity, tz, now)
    parts = [pieces(*c.hours) for c in found]
    counts, unsplit = _counter_hits(db, site, by, str(value), parts, humans)
    rows = []
    for edge, c, part in zip(edges, found, parts, strict=False):
        hits = sum(counts.get((coll, date), 0) for coll, dates in part.items()
                   for date in dates)
        for a, b in c.events:
            hits += event_values(db, site, by, a, b, humans).get(str(value), (0,))[0]
        rows.append((edge, hits))
    frame = pd.DataFrame(rows, columns=["time", "hits"]).set_index("time")
    frame["hits"] = frame["hits"].astype("int64")
    frame.attrs.update(unsplit=unsplit, exact=all(c.exact for c in found))
    return frame


def _counter_hits(db, site: str, dim: str, value: str, parts: list[dict], humans: bool
                  ) -> tuple[dict[tuple[str, dt.datetime], int], int]:
    """The value's hits in each counter document the buckets' parts name, keyed by
    (collection, date), read in one query per collection."""
    name = escape(value)
    fields = projection(f"v.{dim}.{name}", "metadata.date",
                        *((f"b.{dim}.{name}", "v.bot", "bh") if humans else ()))
    found: dict[tuple[str, dt.datetime], int] = {}
    unsplit = 0
    for coll in (MONTHLY, DAILY, HOURLY):
        dates = sorted({date for part in parts for date in part[coll]})
        if not dates:
            continue
        ids = [sketches.bucket_id(site, date, sketches.LEVELS[coll]) for date in dates]
        for doc in db[coll].find({"_id": {"$in": ids}}, fields):
            n = doc.get("v", {}).get(dim, {}).get(name, 0)
            if humans:
                n -= doc.get("b", {}).get(dim, {}).get(name, 0)
                unsplit += unsplit_bots(doc)
            found[(coll, validation.stored_time(doc["metadata"]["date"]))] = n
    return found, unsplit
