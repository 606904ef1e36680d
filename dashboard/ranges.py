"""Time ranges of the historical page: presets, custom ranges, granularity, drill-down.

Every range is ``[start, end)`` in UTC, computed from wall-clock days of the chosen zone,
so "yesterday" in Europe/Paris is a Paris day, 23 or 25 hours long around DST changes.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from queries import validation
from queries.errors import InvalidRangeError

PRESETS = {"today": "Today", "yesterday": "Yesterday", "7d": "7 days", "30d": "30 days",
           "90d": "90 days", "12m": "12 months", "all": "All time", "custom": "Custom"}
DEFAULT_PRESET = "7d"
ALL_TIME = "all"
GRANULARITIES = {"auto": "Auto", "minute": "Minute", "hour": "Hour", "day": "Day"}
MINUTE_UP_TO = dt.timedelta(days=2)
HOUR_UP_TO = dt.timedelta(days=31)
MAX_POINTS = 20_000
_SIZE = {"minute": dt.timedelta(minutes=1), "hour": dt.timedelta(hours=1),
         "day": dt.timedelta(days=1)}
_DAYS_BACK = {"7d": 6, "30d": 29, "90d": 89, "12m": 364}
DAY = dt.timedelta(days=1)
FIRST_SECOND = dt.timedelta(seconds=1)


@dataclass(frozen=True)
class Period:
    start: dt.datetime
    end: dt.datetime
    granularity: str

    def previous(self, tz: str) -> Period:
        """The period of the same length one step earlier. A period starting at local
        midnight steps back whole local days (today so far → yesterday at the same hours,
        7 days → the 7 days before), so weekdays and hours line up; any other period
        steps back its own length."""
        span = self.end - self.start
        zone = validation.timezone(tz)
        local = self.start.astimezone(zone)
        if local.time() != dt.time():
            return Period(self.start - span, self.start, self.granularity)
        days = -(-span // DAY)
        wall = local.replace(tzinfo=None) - days * DAY
        first = wall.replace(tzinfo=zone).astimezone(dt.UTC)
        return Period(first, first + span, self.granularity)


def preset_range(preset: str, now: dt.datetime, tz: str,
                 span: tuple[dt.datetime, dt.datetime] | None = None
                 ) -> tuple[dt.datetime, dt.datetime]:
    """``today`` and the rolling ranges end now; ``yesterday`` is the whole local day;
    ``all`` is every local day holding the site's hits (``span``: the UTC minutes of
    its first and last hits), until now at the latest: a log of 2019 opens on 2019.
    ``now`` is the start of the current cache bucket, which is midnight itself in the
    first minute of a day: today then ends a second later, inside its first minute,
    shown as still filling (not an empty range)."""
    zone = validation.timezone(tz)
    today = validation.local_midnight(now, zone)
    if preset == ALL_TIME:
        if span is None:
            raise InvalidRangeError("nothing has been counted for this site yet")
        start = validation.local_midnight(min(span[0], now), zone)
        end = validation.local_midnight(span[1], zone, -1)     # the last hit's day, whole
        return start, max(min(end, now), start + FIRST_SECOND)
    if preset == "today":
        return today, max(now, today + FIRST_SECOND)
    if preset == "yesterday":
        return validation.local_midnight(now, zone, 1), today
    if preset in _DAYS_BACK:
        return validation.local_midnight(now, zone, _DAYS_BACK[preset]), now
    raise InvalidRangeError(f"unknown range {preset!r}: use one of {', '.join(PRESETS)}")


def default_preset(span: tuple[dt.datetime, dt.datetime] | None, now: dt.datetime,
                   tz: str) -> str:
    """The range a site opens on: the last 7 days if they hold hits (``span``: the UTC
    minutes of its first and last hits), else all its days (a log of 2019 opens where
    its hits are)."""
    if span is None:
        return DEFAULT_PRESET
    seven = preset_range(DEFAULT_PRESET, now, tz)[0]
    return DEFAULT_PRESET if span[1] >= seven else ALL_TIME


def custom_range(start: str | None, end: str | None, tz: str) -> tuple[dt.datetime, dt.datetime]:
    """``start`` and ``end`` as the URL holds them: ISO dates or date-times read in
    ``tz``; ``end`` is excluded."""
    if not start or not end:
        raise InvalidRangeError("a custom range needs a start and an end date")
    first, last = validation.parse_time(start, tz), validation.parse_time(end, tz)
    return validation.time_range(first, last)


def auto_granularity(start: dt.datetime, end: dt.datetime) -> str:
    span = end - start
    if span <= MINUTE_UP_TO:
        return "minute"
    return "hour" if span <= HOUR_UP_TO else "day"


def period(preset: str, granularity: str, now: dt.datetime, tz: str,
           start: str | None = None, end: str | None = None,
           span: tuple[dt.datetime, dt.datetime] | None = None) -> Period:
    """The period a view shows (``span``: the site's first and last day, for ``all``);
    refuses a granularity that would draw too many points. A custom range ends now at
    the latest (today's drill-down is today so far, as the "Today" preset: no future
    hours drawn as empty, flagged or compared), and one that has not begun is refused."""
    if preset == "custom":
        first, last = custom_range(start, end, tz)
        if first >= now:
            raise InvalidRangeError(f"the range starts in the future ({start}): nothing "
                                    "has been counted yet")
        last = min(last, max(now, first + FIRST_SECOND))
    else:
        first, last = preset_range(preset, now, tz, span)
    chosen = auto_granularity(first, last) if granularity == "auto" else granularity
    if chosen not in _SIZE:
        raise InvalidRangeError(f"unknown granularity {granularity!r}: use one of "
                                f"{', '.join(GRANULARITIES)}")
    buckets = (last - first) / _SIZE[chosen]
    if buckets > MAX_POINTS:
        raise InvalidRangeError(
            f"{int(buckets):,} {chosen} points is too many to draw (at most {MAX_POINTS:,}): "
            "choose a coarser granularity or a shorter range"
        )
    return Period(first, last, chosen)


def drill_down(granularity: str, clicked: str) -> tuple[str, str, str] | None:
    """The view under a clicked point: a day opens its hours, an hour its minutes.
    Returns ``(start, end, granularity)`` as local ISO strings for the URL, or None when
    there is nothing finer (a minute)."""
    try:
        moment = dt.datetime.fromisoformat(str(clicked))
    except ValueError:
        return None
    if granularity == "day":
        first = dt.datetime.combine(moment.date(), dt.time())
        return first.date().isoformat(), (first.date() + dt.timedelta(days=1)).isoformat(), \
            "hour"
    if granularity == "hour":
        first = moment.replace(minute=0, second=0, microsecond=0)
        return (first.isoformat(timespec="minutes"),
                (first + dt.timedelta(hours=1)).isoformat(timespec="minutes"), "minute")
    return None
