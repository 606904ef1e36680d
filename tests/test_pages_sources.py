"""The Sources page's controls without a browser (``dashboard/pages/sources/page.py``):
a preset or the dates picked become the URL, History's way."""

import datetime as dt

import pytest
from dash import no_update
from dashkit import page_module, seed

from dashboard.services import get_services

pytestmark = pytest.mark.usefixtures("frozen_clock")   # the same days at any hour


@pytest.fixture
def sources(app):
    db = get_services(app.server).db
    seed(db, "old", [(dt.datetime(2019, 6, d, 12, tzinfo=dt.UTC), "/a", 1) for d in (3, 5)])
    seed(db, "new", [(dt.datetime.now(dt.UTC) - dt.timedelta(days=1), "/a", 1)])
    return page_module("sources")


def test_a_preset_and_dates_picked_become_the_url(sources):
    pick = sources.apply_range
    # A site whose hits are from 2019 opens on all of them: that preset leaves the URL.
    assert pick({"sources-range"}, "30d", None, None, "?site=old") == "?site=old&range=30d"
    assert pick({"sources-range"}, "all", None, None, "?site=old&range=30d") == "?site=old"
    assert pick({"sources-range"}, "all", None, None, "?site=new") == "?site=new&range=all"
    assert pick({"sources-range"}, "90d", None, None,
                "?site=new&days=30") == "?site=new&range=90d"      # an old link's key goes
    assert pick({"sources-range"}, "custom", None, None, "?site=new") is no_update
    assert pick({"sources-dates"}, "all", "2019-06-03", "2019-06-03",
                "?site=old") == "?site=old&end=2019-06-04&range=custom&start=2019-06-03"
    # The dates the view shows, reported back as the picker takes them: nothing changes.
    assert pick({"sources-dates"}, "all", "2019-06-03", "2019-06-05", "?site=old") is no_update
    assert pick({"sources-dates"}, "all", None, "2019-06-05", "?site=old") is no_update


def test_the_view_draws_any_range_and_says_what_is_wrong_with_a_bad_one(sources):
    out = sources.render("?site=old&tz=UTC", "/sources")
    assert out[4:] == ("all", "2019-06-03", "2019-06-05")
    out = sources.render("?site=old&tz=UTC&range=custom&start=2019-06-05", "/sources")
    assert "needs a start and an end" in str(out[1]) and out[4] == "custom"
