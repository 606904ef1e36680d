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
from .layout import TABLES

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


# breakdown dimension -> (table, its value column, the columns added, how a value reads)
_SAME = str
BREAKDOWNS = {
    "referrer": ("sources", "source", ("pageviews", "visitors"),
                 lambda v: v or "(direct)"),
    "utm_source": ("sources", "utm_source", ("pageviews", "visitors"), _SAME),
    "utm_medium": ("sources", "utm_medium", ("pageviews", "visitors"), _SAME),
    "utm_campaign": ("sources", "utm_campaign", ("pageviews", "visitors"), _SAME),
    "country": ("locations", "country", ("pageviews", "visitors"), _SAME),
    "device": ("devices", "device", ("pageviews", "visitors"), str.lower),
    "browser": ("browsers", "browser", ("pageviews", "visitors"), _SAME),
    "os": ("operating_systems", "operating_system", ("pageviews", "visitors"), _SAME),
    "page": ("pages", "page", ("pageviews", "visitors"), _SAME),
    "entry_page": ("entry_pages", "entry_page", ("entrances", "bounces", "visit_duration"),
                   _SAME),
    "exit_page": ("exit_pages", "exit_page", ("exits", "bounces", "visit_duration"), _SAME),
    "event": ("custom_events", "name", ("events", "visitors"), _SAME),
}


def breakdown_counts(db, site: str, by: str, start: dt.datetime, end: dt.datetime, tz: str
                     ) -> tuple[dict[str, list[int]], int]:
    """Per value of ``by``, the imported days' counts over [start, end) (hits and
    visitors; for entry and exit pages visits, bounces and duration in seconds), and
    how many imported days there were."""
    if by not in BREAKDOWNS:
        return {}, 0
    table_name, column, wanted, read = BREAKDOWNS[by]
    table = TABLES[table_name]
    names = [*table.keys, *table.counts]
    at, picks = names.index(column), [names.index(c) for c in wanted]
    zone = validation.timezone(tz)
    first = dt.datetime.combine(start.astimezone(zone).date(), dt.time(), dt.UTC)
    last = dt.datetime.combine(end.astimezone(zone).date(), dt.time(), dt.UTC)
    found: dict[str, list[int]] = {}
    days = 0
    for doc in store.days(db, site, first, last + dt.timedelta(days=1),
                          (f"tables.{table_name}",)):
        label = doc["day"]
        midnight = dt.datetime(label.year, label.month, label.day, tzinfo=zone)
        if not start <= midnight < end:
            continue
        days += 1
        for row in (doc.get("tables") or {}).get(table_name, ()):
            value = read(row[at])
            if not value:
                continue
            counts = found.setdefault(value, [0] * len(picks))
            for i, pick in enumerate(picks):
                counts[i] += row[pick]
    return found, days


def add_breakdown(frame: pd.DataFrame, counts: dict[str, list[int]]) -> pd.DataFrame:
    """A breakdown frame (value, hits, visitors, visitors_error) with imported hits and
    visitors added per value, most hits first again, ``(other)`` last."""
    if not counts:
        return frame
    error = "visitors_error" in frame.columns
    rows = {r.value: [int(r.hits), None if pd.isna(r.visitors) else int(r.visitors),
                      (None if pd.isna(r.visitors_error) else int(r.visitors_error))
                      if error else None] for r in frame.itertuples()}
    for value, (hits, people) in counts.items():
        row = rows.setdefault(value, [0, 0, 0])
        row[0] += hits
        row[1] = (row[1] or 0) + people
    ordered = sorted(rows.items(), key=lambda kv: (kv[0] == store.OTHER, -kv[1][0], kv[0]))
    columns = ["value", "hits", "visitors", "visitors_error"]
    merged = pd.DataFrame([[v, *r] for v, r in ordered], columns=columns)
    merged["hits"] = merged["hits"].astype("int64")
    for column in ("visitors", "visitors_error"):
        merged[column] = pd.to_numeric(merged[column]).astype("Int64")
    merged = merged[list(frame.columns)] if not error else merged
    merged.attrs.update(frame.attrs)
    return merged


def add_page_visits(frame: pd.DataFrame, counts: dict[str, list[int]]) -> pd.DataFrame:
    """An entry or exit pages frame (value, visits, bounce_rate, visit_duration) with
    imported visits, bounces and durations added per page, most visits first again."""
    if not counts:
        return frame
    rows = {r.value: [r.visits, r.visits * (0 if pd.isna(r.bounce_rate) else r.bounce_rate)
                      / 100, r.visits * (0 if pd.isna(r.visit_duration) else r.visit_duration)]
            for r in frame.itertuples()}
    for value, (visits, bounces, seconds) in counts.items():
        row = rows.setdefault(value, [0, 0, 0])
        row[0], row[1], row[2] = row[0] + visits, row[1] + bounces, row[2] + seconds
    ordered = sorted(rows.items(), key=lambda kv: (-kv[1][0], kv[0]))
    merged = pd.DataFrame(
        [[v, n, 100 * b / n if n else np.nan, s / n if n else np.nan] for v, (n, b, s) in ordered],
        columns=list(frame.columns))
    merged.attrs.update(frame.attrs)
    return merged


def add_events(frame: pd.DataFrame, counts: dict[str, list[int]], people: int,
               imported_people: int) -> pd.DataFrame:
    """An events frame (``custom.reads.COLUMNS``) with imported events and visitors
    added per name, conversion rates over the range's people and the imported days'
    visitors, most conversions first again."""
    if not counts:
        return frame
    rows = {r.value: [int(r.conversions), int(r.visitors), r.revenue, r.visitors_error]
            for r in frame.itertuples()}
    for name, (events, visitors) in counts.items():
        row = rows.setdefault(name, [0, 0, "", 0])
        row[0], row[1] = row[0] + events, row[1] + visitors
    total = people + imported_people
    merged = pd.DataFrame(
        [[name, n, seen, round(100 * seen / total, 1) if total else None, revenue, error]
         for name, (n, seen, revenue, error) in rows.items()], columns=list(frame.columns))
    merged = merged.sort_values(["conversions", "value"], ascending=[False, True],
                                ignore_index=True)
    merged.attrs.update(frame.attrs)
    return merged
