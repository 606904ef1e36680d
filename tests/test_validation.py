"""Every bad input of the issue's list is refused with a ValueError a user understands,
through the validators and through the public API that uses them."""

from __future__ import annotations

import datetime as dt

import pytest

import queries
from queries import validation
from queries.errors import (
    HitboardError,
    InvalidPageError,
    InvalidRangeError,
    InvalidSiteError,
    InvalidTimeZoneError,
    NaiveTimestampError,
)

UTC = dt.UTC
T0 = dt.datetime(2026, 11, 21, tzinfo=UTC)


@pytest.mark.parametrize("site", ["", "a b", "a/b", "x" * 65, "é", None, 7, "a\x00"])
def test_bad_sites(site):
    with pytest.raises(InvalidSiteError, match="1 to 64 letters"):
        validation.site(site)


@pytest.mark.parametrize("site", ["a", "site-1", "a.b_c-D9", "x" * 64])
def test_good_sites(site):
    assert validation.site(site) == site


@pytest.mark.parametrize("page, message", [
    ("/" + "p" * 2048, "2049 characters, at most 2048"),
    ("/a\x00b", "NUL"),
    ("", "non-empty"),
    (None, "non-empty"),
])
def test_bad_pages(page, message):
    with pytest.raises(InvalidPageError, match=message):
        validation.page(page)


def test_good_pages():
    assert validation.page("/" + "p" * 2047) == "/" + "p" * 2047
    assert validation.page("a.b$c") == "/a.b$c"
    assert validation.page("*") == "*"


def test_naive_timestamps_are_refused():
    with pytest.raises(NaiveTimestampError, match="no time zone"):
        validation.timestamp(dt.datetime(2026, 1, 1))
    with pytest.raises(NaiveTimestampError, match="expected a datetime"):
        validation.timestamp(dt.date(2026, 1, 1))
    offset = dt.timezone(dt.timedelta(hours=5, minutes=30))
    assert validation.timestamp(dt.datetime(2026, 1, 1, 5, 30, tzinfo=offset)) == T0.replace(
        month=1, day=1)


@pytest.mark.parametrize("name", ["Mars/Olympus", "", "../etc/passwd", None, "Europe", "America"])
def test_unknown_time_zones(name):
    with pytest.raises(InvalidTimeZoneError, match="unknown time zone"):
        validation.timezone(name)


def test_ranges_must_not_be_empty():
    with pytest.raises(InvalidRangeError, match="not after start"):
        validation.time_range(T0, T0)
    with pytest.raises(InvalidRangeError):
        validation.time_range(T0, T0 - dt.timedelta(minutes=1))


def test_parse_time():
    assert validation.parse_time("2026-11-21T10:00", "Europe/Paris") == dt.datetime(
        2026, 11, 21, 9, tzinfo=UTC)
    assert validation.parse_time("2026-11-21T10:00+00:00", "Asia/Kolkata") == T0.replace(hour=10)
    assert validation.parse_time("2026-11-21") == T0
    with pytest.raises(InvalidRangeError, match="ISO 8601"):
        validation.parse_time("yesterday")
    with pytest.raises(InvalidTimeZoneError):
        validation.parse_time("2026-11-21", "Nowhere/Land")


def test_every_error_is_a_value_error():
    assert all(issubclass(e, ValueError) for e in (
        HitboardError, InvalidSiteError, InvalidPageError, NaiveTimestampError,
        InvalidRangeError, InvalidTimeZoneError, queries.StoreLockedError,
        queries.RecorderOverloadedError))


def test_the_api_refuses_bad_input_before_writing(db):
    bad_calls = [
        (InvalidSiteError, lambda: queries.log_hit(db, T0, "bad site", "/a")),
        (InvalidPageError, lambda: queries.log_hit(db, T0, "s1", "/" + "p" * 2048)),
        (InvalidPageError, lambda: queries.log_hit(db, T0, "s1", "/a\x00")),
        (NaiveTimestampError, lambda: queries.log_hit(db, dt.datetime(2026, 1, 1), "s1", "/a")),
        (InvalidSiteError, lambda: queries.preallocate(db, T0, "", "/a")),
        (InvalidPageError, lambda: queries.preallocate(db, T0, "s1", "a\x00")),
    ]
    for error, call in bad_calls:
        with pytest.raises(error):
            call()
    assert db["stats.daily"].count_documents({}) == 0


def test_the_reads_refuse_bad_input(db):
    end = T0 + dt.timedelta(days=1)
    bad_calls = [
        (InvalidSiteError, lambda: queries.hourly_series(db, "a b", T0, end)),
        (InvalidPageError, lambda: queries.hourly_series(db, "s1", T0, end, pages=["/\x00"])),
        (NaiveTimestampError, lambda: queries.daily_series(db, "s1", dt.datetime(2026, 1, 1),
                                                           end)),
        (InvalidRangeError, lambda: queries.minute_series(db, "s1", end, T0)),
        (InvalidRangeError, lambda: queries.minute_series(db, "s1", T0,
                                                          T0 + dt.timedelta(days=401))),
        (InvalidTimeZoneError, lambda: queries.hourly_series(db, "s1", T0, end, tz="Nowhere")),
        (InvalidRangeError, lambda: queries.series(db, "s1", T0, end, "fortnight")),
        (InvalidRangeError, lambda: queries.top_pages(db, "s1", end, T0)),
    ]
    for error, call in bad_calls:
        with pytest.raises(error):
            call()
    assert len(queries.minute_series(db, "s1", T0, T0 + dt.timedelta(days=400))) == 400 * 1440
