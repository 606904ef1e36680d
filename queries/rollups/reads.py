"""Reading the rollups: series for ``report``, tables for the Rollups page, the run
status. The consistency check against the pre-aggregated statistics is
``rollup_checks``."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from .. import validation
from ..errors import InvalidRangeError, InvalidTimeZoneError
from ..events import reads as event_reads
from ..stats import schema
from ..stats.series import normalise_pages
from ..validation import WHOLE_SITE
from . import documents
from .build import checkpoint, floor, next_start
from .documents import CLASSES

LEVELS = {"hour": "hourly", "day": "daily", "week": "weekly", "month": "monthly",
          "year": "yearly"}
GRANULARITIES = tuple(LEVELS)
METRICS = ("hits", "bytes", "mean_bytes", "error_rate")
MAX_READ_BUCKETS = 20_000
UTC_NAMES = ("UTC", "Etc/UTC", "GMT", "Etc/GMT", "Zulu", "Etc/Zulu", "Universal")


def level_of(granularity: str) -> str:
    if granularity in LEVELS:
        return LEVELS[granularity]
    if granularity in LEVELS.values():
        return granularity
    raise InvalidRangeError(f"unknown rollup level {granularity!r}: use one of "
                            f"{', '.join(GRANULARITIES)}")


def bucket_starts(level: str, start: dt.datetime, end: dt.datetime) -> list[dt.datetime]:
    """Bucket starts covering ``[start, end)``: the first floored, the last before end."""
    start, end = validation.time_range(start, end)
    starts = [floor(level, start)]
    while (following := next_start(level, starts[-1])) < end:
        starts.append(following)
        if len(starts) > MAX_READ_BUCKETS:
            raise InvalidRangeError(f"more than {MAX_READ_BUCKETS} {level} buckets: "
                                    "choose a coarser level or a shorter range")
    return starts


def rollup_series(db, site: str, start: dt.datetime, end: dt.datetime, granularity: str,
                  pages: Sequence[str] | None = None, tz="UTC",
                  metric: str = "hits") -> pd.DataFrame:
    """Like :func:`queries.series`, read from the rollups: index ``time`` (bucket starts,
    UTC), one column per page (``*`` = the whole site), zero-filled."""
    if validation.timezone(tz).key not in UTC_NAMES:
        raise InvalidTimeZoneError("rollup buckets are UTC days, weeks, months and years: "
                                   "use --tz UTC (or --source stats for other zones)")
    if metric not in METRICS:
        raise InvalidRangeError(f"unknown metric {metric!r}: use one of {', '.join(METRICS)}")
    level = level_of(granularity)
    site, page_list = validation.site(site), normalise_pages(pages)
    starts = bucket_starts(level, start, end)
    index = pd.DatetimeIndex(starts, name="time")
    frame = pd.DataFrame(0, index=index, columns=page_list,
                         dtype="int64" if metric in ("hits", "bytes") else "float64")
    for doc in _docs(db, level, site, page_list, starts[0], next_start(level, starts[-1])):
        frame.loc[pd.Timestamp(validation.timestamp(doc["start"])), doc["page"]] = \
            _metric(doc, metric)
    frame.columns.name = "page"
    return frame


def rollup_table(db, site: str, level: str, start: dt.datetime, end: dt.datetime,
                 page: str = WHOLE_SITE) -> pd.DataFrame:
    """Every metric of one page's buckets in ``[start, end)``: index ``time``; columns
    hits, bytes, mean_bytes, error_rate and one per status class. Missing buckets are
    absent (a table, not a chart)."""
    level, site, page = level_of(level), validation.site(site), validation.page(page)
    start, end = validation.time_range(start, end)
    docs = _docs(db, level, site, [page], floor(level, start), end)
    rows = [{"time": validation.timestamp(d["start"]), "hits": d["hits"], "bytes": d["bytes"],
             "mean_bytes": float(d["mean_bytes"]), "error_rate": _metric(d, "error_rate"),
             **{c: d["status"].get(c, 0) for c in CLASSES}} for d in docs]
    columns = ["hits", "bytes", "mean_bytes", "error_rate", *CLASSES]
    frame = pd.DataFrame(rows, columns=["time", *columns]).set_index("time").sort_index()
    return frame


def rollup_span(db, site: str, level: str) -> tuple[dt.datetime, dt.datetime] | None:
    """First and last bucket start of a site's rollups at ``level``, if any."""
    coll = db[schema.ROLLUPS[level_of(level)]]
    query = {"site": validation.site(site)}
    first = list(coll.find(query, {"start": 1}, sort=[("start", 1)], limit=1))
    last = list(coll.find(query, {"start": 1}, sort=[("start", -1)], limit=1))
    if not first:
        return None
    return validation.timestamp(first[0]["start"]), validation.timestamp(last[0]["start"])


def _docs(db, level, site, pages, lo, hi) -> list[dict]:
    """Buckets of ``[lo, hi)`` per page asked for, ``{page, start, hits, bytes,
    mean_bytes, status}`` in order of start: ``*`` from the site's totals (the page rows
    are then left undecoded when nothing else is asked), other pages from the rows."""
    wanted = set(pages)
    query = {"site": site, "start": {"$gte": lo, "$lt": hi}}
    totals = ("start", "part", "hits", "bytes", "mean_bytes", "status")
    projection = dict.fromkeys(totals if wanted == {WHOLE_SITE} else (*totals, "pages"), 1)
    out = []
    for doc in db[schema.ROLLUPS[level]].find(query, projection, sort=[("start", 1)]):
        if WHOLE_SITE in wanted and doc.get("part") == 0:
            out.append({"page": WHOLE_SITE, **{k: doc[k] for k in totals if k != "part"}})
        out += documents.page_rows(doc, wanted)
    return out


def page_totals(db, site: str, start: dt.datetime, end: dt.datetime
                ) -> tuple[dict[str, int], int]:
    """Hits per page over ``[start, end)`` (whole UTC days): the whole months inside
    from the monthly buckets, the other days from the daily ones. Returns them with the
    site's total as the buckets say it, for a caller to check against the statistics."""
    site = validation.site(site)
    start, end = validation.time_range(start, end)
    pages: dict[str, int] = {}
    total = 0
    month = floor("monthly", start)
    if month < start:
        month = next_start("monthly", month)
    months = []
    while next_start("monthly", month) <= end:
        months.append(month)
        month = next_start("monthly", month)
    spans = ([("daily", start, months[0]), ("monthly", months[0], month),
              ("daily", month, end)] if months else [("daily", start, end)])
    for level, lo, hi in spans:
        if lo >= hi:
            continue
        query = {"site": site, "start": {"$gte": lo, "$lt": hi}}
        for doc in db[schema.ROLLUPS[level]].find(query, {"pages": 1, "hits": 1, "part": 1}):
            total += doc.get("hits", 0) if doc.get("part") == 0 else 0
            for page, hits, *_ in documents.rows(doc):
                pages[page] = pages.get(page, 0) + hits
    return pages, total


def _metric(doc: dict, metric: str):
    if metric == "error_rate":
        errors = doc["status"].get("4xx", 0) + doc["status"].get("5xx", 0)
        return errors / doc["hits"] if doc["hits"] else 0.0
    return doc[metric]


@dataclass(frozen=True)
class RollupStatus:
    last_run: dt.datetime | None
    read_until: dt.datetime | None
    lag_s: float | None            # now - the newest ingestion instant the last run read
    events_waiting: int            # events ingested after that instant
    documents: dict


def rollup_status(db, now: dt.datetime | None = None) -> RollupStatus:
    now = now or dt.datetime.now(dt.UTC)
    state = checkpoint(db)
    read_until = state["read_until"] and validation.timestamp(state["read_until"])
    waiting = event_reads.waiting(db, read_until)
    return RollupStatus(
        last_run=state["last_run"] and validation.timestamp(state["last_run"]),
        read_until=read_until,
        lag_s=(now - read_until).total_seconds() if read_until else None,
        events_waiting=waiting, documents=state["documents"])


def level_name(level: str) -> str:
    return {v: k for k, v in LEVELS.items()}[level_of(level)]
