"""dashboard.ranges: presets in the viewer's zone, granularity, previous period, drill-down."""

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from dashboard.pages.history.view import ends_inside_a_bucket
from dashboard.ranges import (
    Period,
    auto_granularity,
    custom_range,
    drill_down,
    period,
    preset_range,
)
from queries.errors import InvalidRangeError, InvalidTimeZoneError

UTC = dt.UTC
NOW = dt.datetime(2026, 11, 21, 13, 45, tzinfo=UTC)  # 14:45 in Paris


def test_today_and_yesterday_are_local_days():
    assert preset_range("today", NOW, "Europe/Paris") == (
        dt.datetime(2026, 11, 20, 23, 0, tzinfo=UTC), NOW)
    assert preset_range("yesterday", NOW, "Europe/Paris") == (
        dt.datetime(2026, 11, 19, 23, 0, tzinfo=UTC), dt.datetime(2026, 11, 20, 23, 0, tzinfo=UTC))


def test_today_in_the_first_minute_of_a_day_is_that_minute_still_filling():
    """Now is the cache bucket's start: midnight itself for a minute, when "today" was
    an empty range (an error on History, and on Live's links to it)."""
    midnight = dt.datetime(2026, 11, 20, 23, 0, tzinfo=UTC)     # in Paris
    shown = period("today", "auto", midnight, "Europe/Paris")
    assert (shown.start, shown.granularity) == (midnight, "minute")
    assert dt.timedelta(0) < shown.end - shown.start < dt.timedelta(minutes=1)
    assert ends_inside_a_bucket(shown, "Europe/Paris")


def test_a_local_day_across_a_dst_change_lasts_25_hours():
    after = dt.datetime(2026, 10, 26, 12, tzinfo=UTC)  # Paris left summer time on the 25th
    start, end = preset_range("yesterday", after, "Europe/Paris")
    assert end - start == dt.timedelta(hours=25)


@pytest.mark.parametrize(("preset", "days"), [("7d", 7), ("30d", 30), ("90d", 90),
                                              ("12m", 365)])
def test_rolling_presets_cover_whole_local_days_including_today(preset, days):
    start, end = preset_range(preset, NOW, "UTC")
    assert end == NOW
    assert start == dt.datetime(2026, 11, 21, tzinfo=UTC) - dt.timedelta(days=days - 1)


def test_unknown_preset_and_zone_are_refused():
    with pytest.raises(InvalidRangeError):
        preset_range("fortnight", NOW, "UTC")
    with pytest.raises(InvalidTimeZoneError):
        preset_range("today", NOW, "Mars/Olympus")


def test_custom_range_reads_dates_in_the_zone_and_excludes_the_end():
    start, end = custom_range("2026-11-01", "2026-11-08", "Asia/Tokyo")
    assert start == dt.datetime(2026, 10, 31, 15, tzinfo=UTC)
    assert end - start == dt.timedelta(days=7)
    with pytest.raises(InvalidRangeError, match="needs a start"):
        custom_range(None, "2026-11-08", "UTC")
    with pytest.raises(InvalidRangeError):
        custom_range("2026-11-08", "2026-11-01", "UTC")


def test_a_custom_range_ends_now_at_the_latest_and_cannot_begin_in_the_future():
    today = period("custom", "hour", NOW, "Europe/Paris", "2026-11-21", "2026-11-22")
    assert today == period("today", "hour", NOW, "Europe/Paris")   # today's drill-down
    past = period("custom", "hour", NOW, "UTC", "2026-11-20", "2026-11-21")
    assert past.end == dt.datetime(2026, 11, 21, tzinfo=UTC)
    with pytest.raises(InvalidRangeError, match="starts in the future"):
        period("custom", "minute", NOW, "UTC", "2026-11-21T14:00", "2026-11-21T15:00")


@pytest.mark.parametrize(("span", "expected"), [
    (dt.timedelta(hours=1), "minute"), (dt.timedelta(days=2), "minute"),
    (dt.timedelta(days=2, minutes=1), "hour"), (dt.timedelta(days=31), "hour"),
    (dt.timedelta(days=32), "day"), (dt.timedelta(days=365), "day")])
def test_automatic_granularity(span, expected):
    assert auto_granularity(NOW - span, NOW) == expected


def test_chosen_granularity_is_kept_unless_it_draws_too_many_points():
    assert period("7d", "day", NOW, "UTC").granularity == "day"
    with pytest.raises(InvalidRangeError, match="too many"):
        period("30d", "minute", NOW, "UTC")


def test_previous_period_of_today_is_yesterday_at_the_same_hours():
    today = period("today", "auto", NOW, "Europe/Paris")
    before = today.previous("Europe/Paris")
    assert before.start == today.start - dt.timedelta(days=1)
    assert before.end - before.start == today.end - today.start


def test_previous_period_of_seven_days_is_the_seven_days_before():
    week = period("7d", "auto", NOW, "UTC")
    assert week.previous("UTC").start == week.start - dt.timedelta(days=7)


def test_previous_period_of_an_hour_is_the_hour_before():
    hour = Period(dt.datetime(2026, 11, 21, 13, tzinfo=UTC),
                  dt.datetime(2026, 11, 21, 14, tzinfo=UTC), "minute")
    assert hour.previous("UTC") == Period(dt.datetime(2026, 11, 21, 12, tzinfo=UTC), hour.start,
                                          "minute")


def test_drill_down_opens_a_day_then_an_hour():
    assert drill_down("day", "2026-11-20") == ("2026-11-20", "2026-11-21", "hour")
    assert drill_down("hour", "2026-11-20 13:00") == ("2026-11-20T13:00", "2026-11-20T14:00",
                                                      "minute")
    assert drill_down("minute", "2026-11-20 13:05") is None
    assert drill_down("day", "not a date") is None


@pytest.mark.parametrize(("tz", "first", "last"), [
    ("UTC", "2015-05-17", "2015-05-20"),
    ("Asia/Kolkata", "2015-05-17", "2015-05-20"),        # 15:35 on the 20th: no 21st
    ("America/St_Johns", "2015-05-17", "2015-05-20"),    # 07:35 on the 17th: no 16th
])
def test_all_time_is_the_local_days_of_the_first_and_last_hits(tz, first, last):
    """``span``: the UTC minutes of the first and last hits (10:05 on the 17th, 10:05 on
    the 20th), whose local days "All time" shows whole: not a day more at either end."""
    span = (dt.datetime(2015, 5, 17, 10, 5, tzinfo=UTC), dt.datetime(2015, 5, 20, 10, 5,
                                                                       tzinfo=UTC))
    start, end = preset_range("all", NOW, tz, span)
    zone = ZoneInfo(tz)
    assert start == dt.datetime.fromisoformat(first).replace(tzinfo=zone)
    assert end == dt.datetime.fromisoformat(last).replace(tzinfo=zone) + dt.timedelta(days=1)
