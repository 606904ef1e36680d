"""The expected range of traffic: for each bucket, the 10th–90th percentile of the same
weekday and time of day over the previous 4–8 weeks.

Read from the pre-aggregated documents: one ``series`` read per past week (the chart's
own range moved back 7·k days in local wall-clock time, so a DST change does not shift
the hour), plus one indexed read for the site's first day. Weeks before that day are not
counted as zero traffic: they are left out, and with fewer than ``MIN_WEEKS`` weeks of
history there is no range at all (the chart hides the band).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import validation
from ..dimensions.reads import filtered_series
from ..stats import schema
from ..stats.series import bucket_edges, series
from ..validation import WHOLE_SITE

WEEKS = 8
MIN_WEEKS = 4
LOW, HIGH = 10, 90
WINDOW = dt.timedelta(minutes=60)
# A bucket is *outside* only beyond the band by more than counting noise: 3·√n hits or
# 10 %, whichever is larger (steady traffic makes a band a few hits wide).
NOISE_SIGMAS, NOISE_SHARE = 3.0, 0.10


def alarm_bounds(low, high):
    """The values a count must pass (strictly) to be outside the band ``[low, high]``."""
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    below = low - np.maximum(NOISE_SIGMAS * np.sqrt(np.maximum(low, 0)), NOISE_SHARE * low)
    above = high + np.maximum(NOISE_SIGMAS * np.sqrt(np.maximum(high, 1)), NOISE_SHARE * high)
    return below, above


@dataclass(frozen=True)
class ExpectedRange:
    """``frame``: index = the chart's buckets, columns ``low``, ``median``, ``high``
    (NaN where no past week had that bucket) and ``below``/``above``, the counts a bucket
    must pass to be marked outside (see :func:`alarm_bounds`); ``weeks``: weeks read."""

    frame: pd.DataFrame
    weeks: int


@dataclass(frozen=True)
class Excursion:
    """The last 60 minutes against the same 60 minutes of past weeks."""

    direction: str          # "above" or "below"
    ratio: float            # current / median of past weeks (inf when they had none)
    current: int
    low: float
    high: float
    usual: float
    hour: dt.datetime       # the local hour now is in
    weeks: int

    @property
    def text(self) -> str:
        times = "∞" if self.ratio == float("inf") else f"{self.ratio:.1f}"
        return (f"traffic {times}× the usual for {self.hour:%A %H}:00 "
                f"({self.current:,} hits in the last hour, usually "
                f"{self.low:,.0f}–{self.high:,.0f})")


def first_day(db, site: str) -> dt.datetime | None:
    """The first UTC day the site has a whole-site document for (one indexed read)."""
    doc = db[schema.DAILY].find_one(
        {"metadata.site": validation.site(site), "metadata.page": WHOLE_SITE},
        {"metadata.date": 1}, sort=[("metadata.date", 1)])
    if doc is None:
        return None
    return doc["metadata"]["date"].replace(tzinfo=dt.UTC)


def expected_range(db, site: str, start: dt.datetime, end: dt.datetime, granularity: str,
                   pages=None, tz="UTC", weeks: int = WEEKS,
                   min_weeks: int = MIN_WEEKS, source: tuple[str, str] | None = None,
                   humans: bool = False) -> ExpectedRange | None:
    """The band of the total of ``pages`` over ``[start, end)``, or of the hits whose
    dimension ``source`` = (dimension, value) is that value, people's alone if
    ``humans``, as a chart of them draws; None with too little history."""
    zone = validation.timezone(tz)
    start, end = validation.time_range(start, end)
    past = _past_weeks(db, site, start, weeks, zone)
    if len(past) < min_weeks:
        return None
    edges = bucket_edges(start, end, granularity, zone)
    index = pd.DatetimeIndex(edges[:-1]).tz_convert(zone).rename("time")
    keys = [t.tz_localize(None) for t in index]
    columns = []
    for k in past:
        shift = dt.timedelta(days=7 * k)
        first, last = _moved(start, -shift, zone), _moved(end, -shift, zone)
        frame = (series(db, site, first, last, granularity, pages, zone, humans=humans)
                 if source is None
                 else filtered_series(db, site, *source, first, last, granularity, zone,
                                      humans))
        total = frame.sum(axis=1)
        by_key = {t.tz_localize(None) + shift: v for t, v in total.items()}
        columns.append([by_key.get(key, np.nan) for key in keys])
    values = np.array(columns, dtype=float).T
    return ExpectedRange(_percentiles(values, index), len(past))


def hour_excursion(db, site: str, now: dt.datetime, pages=None, tz="UTC",
                   weeks: int = WEEKS, min_weeks: int = MIN_WEEKS) -> Excursion | None:
    """The last 60 whole minutes when they run above the 90th or below the 10th
    percentile of the same minutes of past weeks; None when inside or too little history."""
    zone = validation.timezone(tz)
    end = validation.timestamp(now).replace(second=0, microsecond=0)
    start = end - WINDOW
    past = _past_weeks(db, site, start, weeks, zone)
    if len(past) < min_weeks:
        return None
    current = int(series(db, site, start, end, "minute", pages, zone).to_numpy().sum())
    totals = []
    for k in past:
        shift = dt.timedelta(days=7 * k)
        frame = series(db, site, _moved(start, -shift, zone), _moved(end, -shift, zone),
                       "minute", pages, zone)
        totals.append(float(frame.to_numpy().sum()))
    low, usual, high = np.percentile(totals, [LOW, 50, HIGH])
    below, above = alarm_bounds(low, high)
    if below <= current <= above:
        return None
    ratio = current / usual if usual else float("inf")
    hour = end.astimezone(zone).replace(minute=0)
    return Excursion("above" if current > high else "below", ratio, current, float(low),
                     float(high), float(usual), hour, len(past))


def _past_weeks(db, site, start, weeks, zone) -> list[int]:
    """The k in 1..weeks whose moved range starts on or after the site's first day."""
    first = first_day(db, site)
    if first is None:
        return []
    return [k for k in range(1, weeks + 1)
            if _moved(start, -dt.timedelta(days=7 * k), zone) >= first]


def _moved(when: dt.datetime, shift: dt.timedelta, zone) -> dt.datetime:
    """``when`` moved by ``shift`` in local wall-clock time (same weekday, same hour)."""
    local = when.astimezone(zone).replace(tzinfo=None) + shift
    return local.replace(tzinfo=zone).astimezone(dt.UTC)


def _percentiles(values: np.ndarray, index: pd.DatetimeIndex) -> pd.DataFrame:
    frame = pd.DataFrame(np.nan, index=index, columns=["low", "median", "high", "below",
                                                       "above"])
    known = ~np.isnan(values).all(axis=1) if values.size else np.zeros(len(index), bool)
    if known.any():
        rows = values[known]
        frame.loc[known, "low"] = np.nanpercentile(rows, LOW, axis=1)
        frame.loc[known, "median"] = np.nanpercentile(rows, 50, axis=1)
        frame.loc[known, "high"] = np.nanpercentile(rows, HIGH, axis=1)
        below, above = alarm_bounds(frame.loc[known, "low"], frame.loc[known, "high"])
        frame.loc[known, "below"], frame.loc[known, "above"] = below, above
    return frame
