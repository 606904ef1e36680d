"""queries.stats.schema: the use case's ids and increments."""

from __future__ import annotations

import datetime as dt

from queries.stats import schema

DAY = dt.datetime(2026, 11, 21, tzinfo=dt.UTC)


def test_ids_follow_the_use_case():
    assert schema.daily_id(DAY, "site-1", "/index.html") == "20261121/site-1/index.html"
    assert schema.monthly_id(DAY, "site-1", "/index.html") == "202611/site-1/index.html"
    assert schema.daily_id(DAY, "site-1", "*") == "20261121/site-1*"  # never a page's id


def test_day_increments_add_up_minutes_into_hours_and_the_day():
    assert schema.day_increments({0: 2, 59: 1, 61: 4}) == {
        "minute.0.0": 2, "minute.0.59": 1, "minute.1.1": 4,
        "hourly.0": 3, "hourly.1": 4, "daily": 7}
