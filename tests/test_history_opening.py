"""Where History opens: the most recently active real site, on the last 7 days when they
hold its hits, else on all of its days ("All time"); an empty range says where the hits
are. The clock is frozen: a log of 2015 and traffic of today."""

import datetime as dt

import pytest
import time_machine
from dashkit import page_module, seed

import queries
from dashboard.pages.history.url import controls_of
from dashboard.pages.history.view import compute_view
from dashboard.services import get_services
from dashboard.state import parse_search

NOW = dt.datetime(2026, 11, 25, 15, 40, tzinfo=dt.UTC)
OLD = dt.datetime(2015, 5, 18, 10, 5, tzinfo=dt.UTC)      # the shared log's days


@pytest.fixture(autouse=True)
def frozen():
    with time_machine.travel(NOW, tick=False):
        yield


@pytest.fixture
def stores(app):
    """``old``: a log of May 2015; ``live``: hits an hour ago; ``demo``: synthetic, now."""
    db = get_services(app.server).db
    seed(db, "old", [(OLD, "/a", 3), (OLD + dt.timedelta(days=2), "/b", 2)])
    seed(db, "live", [(NOW - dt.timedelta(hours=1), "/", 5)])
    queries.register_synthetic(db, ["demo"])
    seed(db, "demo", [(NOW - dt.timedelta(minutes=5), "/", 7)])
    get_services(app.server).cache.clear()    # the app's first render read an empty store
    return db


def test_the_default_site_is_the_most_recently_active_real_one(stores):
    assert queries.recent_sites(stores) == ["live", "old", "demo"]
    assert compute_view("").site == "live"
    assert queries.site_span(stores, "old") == (OLD, OLD + dt.timedelta(days=2))


def test_a_site_without_recent_hits_opens_on_all_of_its_days(stores):
    view = compute_view("?site=old&tz=Asia/Kolkata")
    assert view.controls.preset == "all"
    zone = dt.timezone(dt.timedelta(hours=5, minutes=30))
    assert view.period.start == dt.datetime(2015, 5, 18, tzinfo=zone)
    assert view.period.end == dt.datetime(2015, 5, 21, tzinfo=zone)   # 15:35 on the 20th
    assert view.chart.total == 5
    assert controls_of(parse_search("?site=live")).preset == "7d"
    assert compute_view("?site=live&range=all").chart.total == 5


def test_an_empty_range_says_where_the_hits_are_one_click_away(stores):
    history = page_module("history")
    out = history.render("?site=old&range=7d&tz=UTC")
    assert out["totals"] is not None
    notice = str(out["alert"])
    assert "2015-05-18 to 2015-05-20" in notice
    assert "/history?site=old&tz=UTC&range=all" in notice
    assert history.render("?site=old&range=all")["alert"] is None
    assert history.render("?site=live&range=7d")["alert"] is None


def test_choosing_the_opening_range_keeps_the_url_short(stores):
    history = page_module("history")
    out = history.apply_controls({"history-range"}, "all", None, None, "auto", "lines", [],
                                 "?site=old&range=7d")
    assert out["search"] == "?site=old"                      # "all" is old's opening range
    out = history.apply_controls({"history-range"}, "7d", None, None, "auto", "lines", [],
                                 "?site=old")
    assert out["search"] == "?site=old&range=7d"
