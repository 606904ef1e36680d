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
# A bucket is *outside* only beyond the band by more than counting noise: 3·√n hits or
# 10 %, whichever is larger (steady traffic makes a band a few hits wide).
NOISE_SIGMAS, NOISE_SHARE = 3.0, 0.10
# Traffic has *stopped* under this share of the usual (the median of past weeks).
STOPPED_SHARE = 0.05


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
    """The last ``minutes`` whole minutes against the same minutes of past weeks."""

    direction: str          # "above", "below" or "stopped"
    ratio: float            # current / median of past weeks (inf when they had none)
    current: int
    low: float
    high: float
    usual: float
    hour: dt.datetime       # the local hour the window ends in
    weeks: int
    minutes: int = 60
    end: dt.datetime | None = None  # the window's end (UTC, a whole minute)

    @property
    def text(self) -> str:
        usual = f"usually {self.low:,.0f}–{self.high:,.0f}"
        if self.minutes == 60 and self.direction != "stopped":
            times = "∞" if self.ratio == float("inf") else f"{self.ratio:.1f}"
            return (f"traffic {times}× the usual for {self.hour:%A %H}:00 "
                    f"({self.current:,} hits in the last hour, {usual})")
        span = f"the last {self.minutes} minutes" if self.minutes != 60 else "the last hour"
        if self.direction == "stopped":
            return f"traffic stopped: {self.current:,} hits in {span}, {usual}"
        times = "∞" if self.ratio == float("inf") else f"{self.ratio:.1f}"
        return f"traffic {times}× the usual: {self.current:,} hits in {span}, {usual}"


@dataclass(frozen=True)
class WindowBand:
    """A window's hits beside the band of the same window in past weeks: what alerts
    compare, in each direction."""

    start: dt.datetime
    end: dt.datetime
    current: int
    low: float
    usual: float
    high: float
    below: float            # alarm_bounds of [low, high]
    above: float
    weeks: int
    zone: object

    @property
    def minutes(self) -> int:
        return int((self.end - self.start).total_seconds() // 60)

    def outside(self, kind: str) -> bool:
        """Whether the window is outside the band in the direction ``kind``: beyond the
        alarm bound, or for ``stopped`` under 5 % of the median while the median
        expects at least a hit a minute."""
        if kind == "above":
            return self.current > self.above
        if kind == "below":
            return self.current < self.below
        if kind == "stopped":
            return self.usual >= self.minutes and self.current < STOPPED_SHARE * self.usual
        raise ValueError(f"unknown direction {kind!r}")

    def excursion(self) -> Excursion | None:
        """The window as an excursion (stopped before below), None when inside."""
        found = next((kind for kind in ("above", "stopped", "below") if self.outside(kind)),
                     None)
        if found is None:
            return None
        ratio = self.current / self.usual if self.usual else float("inf")
        hour = self.end.astimezone(self.zone).replace(minute=0)
        return Excursion(found, ratio, self.current, self.low, self.high, self.usual, hour,
                         self.weeks, self.minutes, self.end)


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


def window_band(db, site: str, now: dt.datetime, minutes: int, pages=None, tz="UTC",
                weeks: int = WEEKS, min_weeks: int = MIN_WEEKS) -> WindowBand | None:
    """The last ``minutes`` whole minutes before ``now`` beside the 10th, 50th and 90th
    percentile of their totals in past weeks; None with too little history."""
    zone = validation.timezone(tz)
    end = validation.timestamp(now).replace(second=0, microsecond=0)
    start = end - dt.timedelta(minutes=minutes)
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
    low, usual, high = (float(v) for v in np.percentile(totals, [LOW, 50, HIGH]))
    below, above = alarm_bounds(low, high)
    return WindowBand(start, end, current, low, usual, high, float(below), float(above),
                      len(past), zone)


def window_excursion(db, site: str, now: dt.datetime, minutes: int, pages=None, tz="UTC",
                     weeks: int = WEEKS, min_weeks: int = MIN_WEEKS) -> Excursion | None:
    """The last ``minutes`` whole minutes when they run outside the band of the same
    minutes of past weeks; None when inside or with too little history."""
    band = window_band(db, site, now, minutes, pages, tz, weeks, min_weeks)
    return None if band is None else band.excursion()


def hour_excursion(db, site: str, now: dt.datetime, pages=None, tz="UTC",
                   weeks: int = WEEKS, min_weeks: int = MIN_WEEKS) -> Excursion | None:
    """:func:`window_excursion` of the last 60 minutes (Live's banner)."""
    return window_excursion(db, site, now, 60, pages, tz, weeks, min_weeks)


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
