"""queries.stats.kpis: this minute, last hour and today, on every backend."""

import datetime as dt

from dashkit import seed

from queries.stats.kpis import hit_totals

NOW = dt.datetime(2026, 11, 21, 13, 45, 30, tzinfo=dt.UTC)


def test_totals_as_of_now_in_the_chosen_zone(db):
    seed(db, "s", [
        (NOW.replace(second=5), "/a", 3),                      # this minute
        (NOW - dt.timedelta(minutes=30), "/b", 4),             # last hour
        (NOW - dt.timedelta(hours=3), "/a", 5),                # today everywhere
        (dt.datetime(2026, 11, 20, 23, 30, tzinfo=dt.UTC), "/a", 7),  # today in Paris only
        (dt.datetime(2026, 11, 20, 12, tzinfo=dt.UTC), "/a", 100),    # yesterday
    ])
    utc = hit_totals(db, "s", NOW)
    assert (utc.this_minute, utc.last_hour, utc.today) == (3, 7, 12)
    paris = hit_totals(db, "s", NOW, tz="Europe/Paris")
    assert paris.today == 19
    only_a = hit_totals(db, "s", NOW, pages=["/a"], tz="Europe/Paris")
    assert (only_a.this_minute, only_a.last_hour, only_a.today) == (3, 3, 15)


def test_half_hour_zone_counts_from_its_own_midnight(db):
    # Kolkata is UTC+5:30: its day began at 2026-11-20 18:30 UTC.
    seed(db, "s", [(dt.datetime(2026, 11, 20, 18, 20, tzinfo=dt.UTC), "/a", 1),
                   (dt.datetime(2026, 11, 20, 18, 40, tzinfo=dt.UTC), "/a", 2)])
    assert hit_totals(db, "s", NOW, tz="Asia/Kolkata").today == 2


def test_empty_store_counts_zero(db):
    totals = hit_totals(db, "nobody", NOW)
    assert (totals.this_minute, totals.last_hour, totals.today) == (0, 0, 0)
