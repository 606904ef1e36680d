"""Every bad input of the issue's list is refused with a ValueError a user understands,
through the validators and through the public API that uses them."""

from __future__ import annotations

import datetime as dt
import re
from urllib.parse import unquote_to_bytes

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    ("/a\x00b", "control character"),
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


@pytest.mark.parametrize("raw, decoded", [
    ("/nature%E2%80%99s-essence", "/nature\u2019s-essence"),      # UTF-8
    ("/caf%c3%a9/%F0%9F%98%80", "/caf\u00e9/\U0001f600"),          # lower-case hex, 4 bytes
    ("/a%20b", "/a b"),
    ("/100%25", "/100%"),                                          # %25 is %
    ("/a%2541", "/a%41"),                                          # ... decoded once only
    ("/a+b", "/a+b"),                                              # + is no space in a path
    ("/a%2Fb", "/a%2Fb"), ("/a%2fb", "/a%2Fb"),                    # / stays escaped
    ("/%3F%23", "/?#"),
    ("/a%00b", "/a%00b"), ("/a%0A%0d%09", "/a%0A%0D%09"),          # C0 stays escaped
    ("/a%7F", "/a%7F"), ("/a%C2%85", "/a%C2%85"),                  # DEL, C1 too
    ("/a%E2%80%AEgpj.exe", "/a%E2%80%AEgpj.exe"),                  # a bidi override too
    ("/a%EF%BF%BD", "/a%EF%BF%BD"),                                # and U+FFFD
    ("/a%FF", "/a%FF"), ("/a%ff%E9", "/a%FF%E9"),                  # not UTF-8 (Latin-1)
    ("/a%C0%AF", "/a%C0%AF"),                                      # overlong "/"
    ("/a%ED%A0%80", "/a%ED%A0%80"),                                # an encoded surrogate
    ("/a%F4%90%80%80", "/a%F4%90%80%80"),                          # beyond U+10FFFF
    ("/a%E2%80", "/a%E2%80"), ("/a%E2%80x%99", "/a%E2%80x%99"),    # cut sequences
    ("/a%E2%80%99%FF%C3%A9", "/a\u2019%FF\u00e9"),                  # valid around invalid
    ("%", "%"), ("/a%", "/a%"), ("/a%4", "/a%4"), ("/a%G1", "/a%G1"), ("/%%41", "/%A"),
    ("/plain/path.html", "/plain/path.html"),
])
def test_decoded_path(raw, decoded):
    assert validation.decoded_path(raw) == decoded


def test_decoded_path_of_a_long_path_and_the_page_limit_after_decoding():
    raw = "/" + "%E2%80%99" * 2047                      # 6,142 characters, 2,048 decoded
    assert validation.page(validation.decoded_path(raw)) == "/" + "\u2019" * 2047
    with pytest.raises(InvalidPageError, match="2049 characters"):
        validation.page(validation.decoded_path(raw + "%41"))


def test_page_never_decodes():
    assert validation.page("/a%41") == "/a%41"
    assert validation.page("/100%") == "/100%"


_BAD_AFTER_DECODING = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufffd"
                                 "\ud800-\udfff]")


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=60).filter(lambda data: b"%" not in data))
def test_decoding_any_bytes_loses_none_and_adds_no_hostile_character(data):
    raw = "/" + "".join(f"%{byte:02X}" for byte in data)
    decoded = validation.decoded_path(raw)
    assert unquote_to_bytes(decoded.encode("utf-8")) == b"/" + data
    assert not _BAD_AFTER_DECODING.search(decoded) and "/" not in decoded[1:]
    assert len(decoded) <= len(raw)


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
