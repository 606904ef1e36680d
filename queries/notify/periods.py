"""Report periods in a site's zone: a week is Monday to Sunday, a month the calendar
month; a report goes out at ``hour`` local on the Monday or the 1st after its period.
Local days become UTC instants through ``zoneinfo`` (DST days are 23 or 25 hours)."""

from __future__ import annotations

import datetime as dt

from .. import validation

PERIODS = ("week", "month")
DEFAULT_HOUR = 8


def check_period(value) -> str:
    if value not in PERIODS:
        raise validation.InvalidRangeError(f"a report's period is week or month, got "
                                           f"{str(value)[:20]!r}")
    return value


def check_hour(value) -> int:
    if type(value) is not int or not 0 <= value <= 23:
        raise validation.InvalidRangeError(f"a report's hour is 0 to 23, got "
                                           f"{str(value)[:20]!r}")
    return value


def _first_day(period: str, day: dt.date) -> dt.date:
    """The first day of the period holding ``day``."""
    if period == "week":
        return day - dt.timedelta(days=day.weekday())
    return day.replace(day=1)


def _before(period: str, first: dt.date) -> dt.date:
    """The first day of the period before the one starting on ``first``."""
    if period == "week":
        return first - dt.timedelta(days=7)
    return (first - dt.timedelta(days=1)).replace(day=1)


def local(day: dt.date, tz: str, hour: int = 0) -> dt.datetime:
    """``hour`` o'clock of ``day`` in ``tz``, as a UTC instant."""
    zone = validation.timezone(tz)
    return dt.datetime(day.year, day.month, day.day, hour, tzinfo=zone).astimezone(dt.UTC)


def period_before(period: str, end: dt.datetime, tz: str) -> tuple[dt.datetime, dt.datetime]:
    """The last complete period ending at or before ``end``: [start, end) in UTC."""
    check_period(period)
    today = end.astimezone(validation.timezone(tz)).date()
    stop = _first_day(period, today)
    return local(_before(period, stop), tz), local(stop, tz)


def previous(period: str, start: dt.datetime, tz: str) -> tuple[dt.datetime, dt.datetime]:
    """The period before the one starting at ``start``."""
    return period_before(period, start, tz)


def last_send(period: str, hour: int, now: dt.datetime, tz: str) -> dt.datetime:
    """The latest instant at or before ``now`` a report of ``period`` was due: ``hour``
    local on a Monday or on the 1st."""
    first = _first_day(period, now.astimezone(validation.timezone(tz)).date())
    due = local(first, tz, hour)
    return due if due <= now else local(_before(period, first), tz, hour)
