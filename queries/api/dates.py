"""A Stats API ``date_range`` as the instants it covers, in the site's zone."""

from __future__ import annotations

import datetime as dt

from .. import validation
from ..reads.expected import first_day
from .errors import QueryError

PRESETS = ("day", "7d", "28d", "30d", "91d", "month", "6mo", "12mo", "year", "all")
YEARS = (1970, 2200)          # the dates a range may name (pandas counts to 2262)
# A time dimension's buckets in one answer: a year of hours; weeks and months, whose
# visitors are counted bucket by bucket, fewer.
MAX_BUCKETS = {"hour": 10_000, "day": 10_000, "week": 1_000, "month": 1_000}
BUCKET = {"hour": dt.timedelta(hours=1), "day": dt.timedelta(days=1),
          "week": dt.timedelta(days=7), "month": dt.timedelta(days=28)}


def resolve(db, site: str, date_range: object, tz: str,
            now: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    """[start, end) of ``date_range``: a preset (``Nd``: today and the N-1 days before
    it, as History's presets; ``month``, ``year``: the calendar's; ``6mo``, ``12mo``:
    this month and those before it; ``all``: from the site's first day), or ``[start,
    end]``: two dates (both days whole) or two date-times with their offsets."""
    zone = validation.timezone(tz)
    today = now.astimezone(zone).date()
    tomorrow = today + dt.timedelta(days=1)
    if isinstance(date_range, str):
        if date_range not in PRESETS:
            raise QueryError(f'#/date_range: Invalid date range "{date_range[:40]}": one '
                             f"of {', '.join(PRESETS)}, or [start, end]")
        if date_range == "day" or date_range[:-1].isdigit():
            days = 1 if date_range == "day" else int(date_range[:-1])
            first = tomorrow - dt.timedelta(days=days)
        elif date_range == "month":
            first = today.replace(day=1)
        elif date_range.endswith("mo"):
            first = _months_back(today.replace(day=1), int(date_range[:-2]) - 1)
        elif date_range == "year":
            first = today.replace(month=1, day=1)
        else:
            found = first_day(db, site)
            first = found.astimezone(zone).date() if found else today
        rolling = date_range in ("day", "all") or date_range[:-1].isdigit()
        last = tomorrow if rolling else _end_of(first, date_range)
        return _at(first, zone), _at(last, zone)
    if not isinstance(date_range, list) or len(date_range) != 2 \
            or not all(isinstance(x, str) for x in date_range):
        raise QueryError("#/date_range: Invalid date range: a preset, or [start, end] as "
                         "two ISO 8601 strings")
    start_text, end_text = date_range
    if _is_date(start_text) and _is_date(end_text):
        first, last = _date(start_text), _date(end_text)
        if last < first:
            raise QueryError(f"#/date_range: Invalid date range: {end_text} is before "
                             f"{start_text}")
        return _at(first, zone), _at(last + dt.timedelta(days=1), zone)
    start, end = _instant(start_text), _instant(end_text)
    if end <= start:
        raise QueryError(f"#/date_range: Invalid date range: {end_text[:40]} is not after "
                         f"{start_text[:40]}")
    return start.astimezone(dt.UTC), end.astimezone(dt.UTC)


def check_buckets(start: dt.datetime, end: dt.datetime, granularity: str) -> None:
    """A time dimension's buckets are at most ``MAX_BUCKETS``'s."""
    if (end - start) / BUCKET[granularity] > MAX_BUCKETS[granularity]:
        raise QueryError(f"#/dimensions: over {MAX_BUCKETS[granularity]:,} {granularity} "
                         "buckets: "
                         "ask for a shorter range or a longer time dimension")


def granularity_for(start: dt.datetime, end: dt.datetime) -> str:
    """The buckets of a plain ``time`` dimension: hours over two days at most, days
    over three months at most, else months."""
    span = end - start
    if span <= dt.timedelta(days=2):
        return "hour"
    return "day" if span <= dt.timedelta(days=92) else "month"


def _end_of(first: dt.date, preset: str) -> dt.date:
    """The day after a calendar preset's last: next year's first, or the first of the
    month after this one (``month``, ``6mo``, ``12mo`` all end with this month)."""
    if preset == "year":
        return first.replace(year=first.year + 1)
    months = 1 if preset == "month" else int(preset[:-2])
    return _months_back(first, -months)


def _months_back(first: dt.date, months: int) -> dt.date:
    index = first.year * 12 + first.month - 1 - months
    return dt.date(index // 12, index % 12 + 1, 1)


def _at(day: dt.date, zone) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, tzinfo=zone).astimezone(dt.UTC)


def _is_date(text: str) -> bool:
    return len(text) == 10 and text[4:5] == "-"


def _date(text: str) -> dt.date:
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        raise QueryError(f'#/date_range: Invalid date "{text[:40]}"') from None
    return _within(day, text)


def _within(day: dt.date, text: str) -> dt.date:
    if not YEARS[0] <= day.year <= YEARS[1]:
        raise QueryError(f'#/date_range: Invalid date "{text[:40]}": from {YEARS[0]} to '
                         f"{YEARS[1]}")
    return day


def _instant(text: str) -> dt.datetime:
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        raise QueryError(f'#/date_range: Invalid date "{text[:40]}"') from None
    if when.tzinfo is None:
        raise QueryError(f'#/date_range: "{text[:40]}" has no offset: give dates, or '
                         "date-times with their offsets (2026-11-21T14:00:00+01:00)")
    _within(when.date(), text)
    return when
