"""Imported days added to day and longer figures. An imported day is a date, not a span
of time: it counts in the bucket holding its local midnight in the zone asked, and only
for buckets of a day or more (minute and hour figures never hold it). Visitors of a
bucket holding an imported day beside other days or counted traffic are a sum of
daily visitors, so approximate."""

from __future__ import annotations

import datetime as dt
from typing import NamedTuple

import numpy as np
import pandas as pd

from .. import validation
from ..visits.reads import with_metrics
from . import store

DAY_GRANULARITIES = ("day", "week", "month", "year")


class Added(NamedTuple):
    days: int                   # imported days added
    visitors_exact: bool        # False: a bucket's visitors sum days or sources


def imported(db, site: str, start: dt.datetime, end: dt.datetime, tz: str
             ) -> list[tuple[dt.datetime, dict]]:
    """``(local midnight, totals)`` of the imported days whose local midnight in ``tz``
    lies in [start, end)."""
    zone = validation.timezone(tz)
    first = dt.datetime.combine(start.astimezone(zone).date(), dt.time(), dt.UTC)
    last = dt.datetime.combine(end.astimezone(zone).date(), dt.time(), dt.UTC)
    found = []
    for doc in store.days(db, site, first, last + dt.timedelta(days=1)):
        label = doc["day"].replace(tzinfo=dt.UTC) if doc["day"].tzinfo is None else doc["day"]
        midnight = dt.datetime(label.year, label.month, label.day, tzinfo=zone)
        if start <= midnight < end:
            found.append((midnight, doc.get("totals") or {}))
    return found


def _buckets(frame: pd.DataFrame, days: list[tuple[dt.datetime, dict]]) -> np.ndarray:
    starts = np.array([t.timestamp() for t in frame.index], dtype="float64")
    moments = np.array([t.timestamp() for t, _ in days], dtype="float64")
    return np.searchsorted(starts, moments, side="right") - 1


def add_visits(db, site: str, frame: pd.DataFrame, start: dt.datetime, end: dt.datetime,
               granularity: str, tz: str) -> Added:
    """Add imported days to a whole site's ``visits.reads.series`` frame, in place."""
    if granularity not in DAY_GRANULARITIES or frame.empty:
        return Added(0, True)
    days = imported(db, site, start, end, tz)
    for bucket, (_, totals) in zip(_buckets(frame, days), days, strict=True):
        if bucket < 0:
            continue
        row = frame.index[bucket]
        frame.loc[row, "visits"] += totals.get("visits", 0)
        frame.loc[row, "bounces"] += totals.get("bounces", 0)
        frame.loc[row, "duration"] += 1000 * totals.get("visit_duration", 0)
        frame.loc[row, "views"] += totals.get("pageviews", 0)
        frame.loc[row, "pageviews"] += totals.get("pageviews", 0)
    if days:
        with_metrics(frame)
    return Added(len(days), True)


def add_visitors(db, site: str, frame: pd.DataFrame, start: dt.datetime, end: dt.datetime,
                 granularity: str, tz: str) -> Added:
    """Add imported days' visitors to a ``visitors`` frame, in place."""
    if granularity not in DAY_GRANULARITIES or frame.empty:
        return Added(0, True)
    days = imported(db, site, start, end, tz)
    exact = True
    frame["visitors"] = frame["visitors"].astype("float64")
    for bucket, (_, totals) in zip(_buckets(frame, days), days, strict=True):
        if bucket < 0:
            continue
        row = frame.index[bucket]
        exact = exact and not frame.loc[row, "visitors"]
        frame.loc[row, "visitors"] += totals.get("visitors", 0)
    return Added(len(days), exact)


def note(added: Added) -> str | None:
    """What a figure holding imported days says about them."""
    if not added.days:
        return None
    text = f"{added.days:,} imported day{'s' * (added.days != 1)} added (--no-imports: without)"
    if not added.visitors_exact:
        text += "; visitors of a bucket holding imported and counted days are their sum, " \
                "approximate"
    return text
