"""History's comparison: previous period, a year earlier (364 days), or a custom start."""

import datetime as dt

import pytest
from dashkit import page_module, seed

from dashboard.pages.history import compare as compare_view
from dashboard.ranges import Period
from dashboard.services import get_services
from dashboard.state import parse_search
from queries import HitboardError

pytestmark = pytest.mark.usefixtures("frozen_clock")   # the same days at any hour

UTC = dt.UTC
WEEK = Period(dt.datetime(2026, 11, 16, tzinfo=UTC), dt.datetime(2026, 11, 23, tzinfo=UTC),
              "day")


def test_a_year_earlier_is_364_days_back_so_weekdays_line_up():
    other = compare_view.comparison_period(parse_search("?vs=yoy"), WEEK, "UTC")
    assert other.start == dt.datetime(2025, 11, 17, tzinfo=UTC)
    assert other.start.weekday() == WEEK.start.weekday()
    assert other.end - other.start == WEEK.end - WEEK.start


def test_a_custom_start_keeps_the_length_and_is_read_in_the_zone():
    other = compare_view.comparison_period(parse_search("?vs=custom&vsstart=2026-01-05"),
                                           WEEK, "Europe/Paris")
    assert other.start == dt.datetime(2026, 1, 4, 23, tzinfo=UTC)
    assert other.end - other.start == dt.timedelta(days=7)
    for bad in ("?vs=custom", "?vs=custom&vsstart=2027-01-01", "?vs=custom&vsstart=soon"):
        with pytest.raises(HitboardError):
            compare_view.comparison_period(parse_search(bad), WEEK, "UTC")


def test_the_default_is_the_previous_period():
    other = compare_view.comparison_period(parse_search("?vs=nonsense"), WEEK, "UTC")
    assert other == WEEK.previous("UTC")


def test_history_draws_the_year_earlier_and_says_which_dates(app):
    db = get_services(app.server).db
    now = dt.datetime.now(UTC)
    seed(db, "s", [(now - dt.timedelta(days=364 + d), "/a", 7) for d in range(1, 7)]
         + [(now - dt.timedelta(days=d), "/a", 1) for d in range(1, 7)])
    search = "?site=s&range=7d&tz=UTC&compare=1&vs=yoy"
    figure = page_module("history").render(search)["figure"]
    previous = [t for t in figure.data if t.name and "previous" in t.name.lower()]
    assert sum(v for v in previous[0].y if v == v) == 42
    totals = str(page_module("history").render(search)["totals"])
    assert "A year earlier" in totals and "Previous period" not in totals
    assert compare_view.describe_comparison(search).startswith("dashed: ")
    assert compare_view.choose_comparison("yoy", "", "?site=s") == "?site=s&compare=1&vs=yoy"
    assert compare_view.choose_comparison(
        "custom", "2025-01-01", "?site=s") == "?site=s&compare=1&vs=custom&vsstart=2025-01-01"
    bad = page_module("history").render("?site=s&range=7d&compare=1&vs=custom")["alert"]
    assert "needs its start date" in str(bad)
