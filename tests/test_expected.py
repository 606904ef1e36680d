"""queries.reads.expected: the 10th–90th percentile of the same weekday and hour over past weeks."""

import datetime as dt

import numpy as np
import pytest
from dashkit import utc

import queries
from queries.jobs.backfill import DayCounts
from queries.reads import expected

TODAY = utc(2026, 11, 22)


def history(db, days: int, per_minute=lambda k: 1, site="s", until=TODAY):
    """``days`` whole UTC days before ``until``; day k ago has ``per_minute(k)`` hits a minute."""
    items = []
    for k in range(days, 0, -1):
        counts = np.full((1, 1440), per_minute(k), dtype=np.int64)
        items.append(DayCounts(site, until - dt.timedelta(days=k), ["/a"], counts))
    queries.backfill(db, items)


@pytest.mark.volume
def test_the_band_spans_the_10th_to_90th_percentile_of_the_same_weekday(db):
    # Week k ago (k = 1..8) had k hits a minute: 60·k an hour.
    history(db, 70, per_minute=lambda k: (k - 1) // 7)
    band = expected.expected_range(db, "s", TODAY - dt.timedelta(days=1), TODAY, "hour")
    assert band.weeks == 8
    assert len(band.frame) == 24
    hourly = [60 * k for k in range(1, 9)]
    assert band.frame["low"].iloc[5] == pytest.approx(np.percentile(hourly, 10))
    assert band.frame["high"].iloc[5] == pytest.approx(np.percentile(hourly, 90))
    assert band.frame["median"].iloc[5] == pytest.approx(np.percentile(hourly, 50))


def test_daily_buckets_in_a_zone(embedded_db):
    db = embedded_db  # the band's arithmetic; the first test runs it on every backend
    history(db, 70)
    band = expected.expected_range(db, "s", utc(2026, 11, 15), utc(2026, 11, 21), "day",
                                   tz="UTC")
    assert list(band.frame["median"]) == [1440.0] * 6


def test_no_band_with_too_little_history(embedded_db):
    db = embedded_db  # the band's arithmetic; the first test runs it on every backend
    history(db, 2)
    assert expected.expected_range(db, "s", TODAY - dt.timedelta(days=1), TODAY,
                                   "hour") is None
    assert expected.expected_range(db, "nobody", TODAY - dt.timedelta(days=1), TODAY,
                                   "hour") is None


def test_weeks_before_the_first_day_are_left_out_not_read_as_zero(embedded_db):
    db = embedded_db  # the band's arithmetic; the first test runs it on every backend
    history(db, 35)  # 5 past weeks of the last day
    band = expected.expected_range(db, "s", TODAY - dt.timedelta(days=1), TODAY, "hour")
    assert band.weeks == 4
    assert band.frame["low"].min() == 60


def test_an_hour_far_above_the_usual_is_an_excursion(embedded_db):
    db = embedded_db  # the band's arithmetic; the first test runs it on every backend
    history(db, 60)
    now = TODAY - dt.timedelta(days=1) + dt.timedelta(hours=14, minutes=30)
    assert expected.hour_excursion(db, "s", now - dt.timedelta(days=1)) is None
    queries.backfill(db, [DayCounts("s", TODAY, ["/a"], np.full((1, 1440), 5))])
    high = expected.hour_excursion(db, "s", TODAY + dt.timedelta(hours=14, minutes=30))
    assert high.direction == "above" and high.ratio == pytest.approx(5.0)
    assert high.text.startswith("traffic 5.0× the usual for Sunday 14:00")


def test_an_hour_far_below_the_usual_is_an_excursion(embedded_db):
    db = embedded_db  # the band's arithmetic; the first test runs it on every backend
    history(db, 60, per_minute=lambda k: 10)
    queries.backfill(db, [DayCounts("s", TODAY, ["/a"], np.full((1, 1440), 1))])
    low = expected.hour_excursion(db, "s", TODAY + dt.timedelta(hours=3), tz="Europe/Paris")
    assert low.direction == "below" and low.ratio == pytest.approx(0.1)
    assert "Sunday 04:00" in low.text


def test_counting_noise_is_not_an_excursion(embedded_db):
    db = embedded_db  # the band's arithmetic; the first test runs it on every backend
    """Steady past weeks make a band a few hits wide: 5 % more is noise, not an anomaly."""
    history(db, 60, per_minute=lambda k: 20)
    queries.backfill(db, [DayCounts("s", TODAY, ["/a"], np.full((1, 1440), 21))])
    assert expected.hour_excursion(db, "s", TODAY + dt.timedelta(hours=3)) is None
    band = expected.expected_range(db, "s", TODAY - dt.timedelta(days=1), TODAY, "hour")
    assert (band.frame["above"] > band.frame["high"] * 1.09).all()


def test_the_band_of_a_chart_of_humans_leaves_bots_out_as_the_chart_does(embedded_db):
    """The History chart shows humans by default: a band of every hit stood above it by
    the bot share, flagging ordinary hours as below the usual."""
    from dimkit import GOOGLEBOT

    from queries.counting import DimensionRecorder
    from queries.dimensions import classify

    db, hour = embedded_db, TODAY - dt.timedelta(days=1) + dt.timedelta(hours=9)
    person = classify("s", "/a", status=200, agent="Mozilla/5.0 Firefox/120.0",
                      address="81.2.69.160")
    bot = classify("s", "/a", status=200, agent=GOOGLEBOT, address="66.249.66.1")
    with DimensionRecorder(db, flush_interval=3600) as recorder:
        for week in range(1, 9):
            when = hour - dt.timedelta(days=7 * week)
            for _ in range(10):
                queries.log_hit(db, when, "s", "/a")
            recorder.record("s", "/a", when, person, n=7)
            recorder.record("s", "/a", when, bot, n=3)
    everyone = expected.expected_range(db, "s", hour, hour + dt.timedelta(hours=1), "hour")
    humans = expected.expected_range(db, "s", hour, hour + dt.timedelta(hours=1), "hour",
                                     source=("bot", "human"), humans=True)
    assert everyone.frame["median"].iloc[0] == 10 and humans.frame["median"].iloc[0] == 7


def test_a_window_under_five_percent_of_the_usual_has_stopped(embedded_db):
    db = embedded_db  # the band's arithmetic; the first test runs it on every backend
    history(db, 35, per_minute=lambda k: 2)
    today = np.full((1, 1440), 2)
    today[:, 600:] = 0                                   # nothing from 10:00
    queries.backfill(db, [DayCounts("s", TODAY, ["/a"], today)])
    at = TODAY + dt.timedelta(hours=10, minutes=15, seconds=40)
    found = expected.window_excursion(db, "s", at, 15)
    assert (found.direction, found.current, found.usual, found.minutes) == ("stopped", 0, 30, 15)
    assert found.text == "traffic stopped: 0 hits in the last 15 minutes, usually 30–30"
    assert expected.window_excursion(db, "s", at - dt.timedelta(minutes=5), 15).direction \
        == "below"                                       # 10 hits of 30: low, not stopped
    later = at + dt.timedelta(minutes=30)
    assert expected.hour_excursion(db, "s", later).direction == "below"   # 30 of 120


def test_a_quiet_site_never_stops(embedded_db):
    """Under a hit a minute expected, an empty window is no news."""
    db = embedded_db  # the band's arithmetic; the first test runs it on every backend
    midnight = np.zeros((1, 1440), int)
    midnight[:, 0] = 10                                 # hits at midnight only
    queries.backfill(db, [DayCounts("s", TODAY - dt.timedelta(days=k), ["/a"], midnight)
                          for k in range(35, -1, -1)])
    band = expected.window_band(db, "s", TODAY + dt.timedelta(hours=3), 15)
    assert band.usual == 0 and not band.outside("stopped") and band.excursion() is None
