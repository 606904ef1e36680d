"""queries/reads/query.py and dashboard/pages/history/view.history_view: a History URL
becomes one query value, read once, which every callback of the page is handed; a page,
a dimension's value and a goal are all conditions on the hits, and the value says which
representation answers each part of the screen and under which conditions."""

import datetime as dt

import pytest
from dash import no_update
from dashkit import page_module
from dimkit import ingest_sample

from dashboard.pages.history import panels as history_panels
from dashboard.pages.history import view as view_module
from dashboard.services import get_services
from queries.reads.query import (
    CHART,
    COUNTERS,
    ENTRY,
    EVENTS,
    GOAL,
    GOALS,
    KPIS,
    PAGE,
    PANELS,
    SHARE,
    STATS,
    VISIT_KPIS,
    VISITS,
    Condition,
    Query,
)

pytestmark = pytest.mark.usefixtures("frozen_clock")

START = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
PAGES = Condition(PAGE, ("/a", "/b"))
NEWS = Condition("referrer", ("news.example",))


def query(*conditions, **more) -> Query:
    return Query("s", START, START + dt.timedelta(days=7), "day", conditions=conditions,
                 **more)


@pytest.mark.parametrize(("conditions", "chart", "kpis", "panels", "share"), [
    ((), STATS, COUNTERS, COUNTERS, STATS),
    ((PAGES,), STATS, EVENTS, EVENTS, STATS),
    ((NEWS,), COUNTERS, COUNTERS, EVENTS, COUNTERS),
    ((PAGES, NEWS), EVENTS, EVENTS, EVENTS, EVENTS),
])
def test_each_part_is_read_from_the_representation_that_answers_its_conditions(
        conditions, chart, kpis, panels, share):
    q = query(*conditions)
    assert [q.reads(part).source for part in (CHART, KPIS, PANELS, SHARE)] == [
        chart, kpis, panels, share]
    assert all(q.follows(part) for part in (CHART, KPIS, PANELS, SHARE))
    for part in (VISIT_KPIS, ENTRY, GOALS):      # visits are the site's whole
        assert q.reads(part).source == VISITS
        assert q.follows(part) is not conditions


def test_a_page_a_value_and_a_goal_are_conditions_alike():
    q = query(PAGES, NEWS, Condition(GOAL, ("Signup",)))
    assert q.pages == ("/a", "/b") and q.filter == ("referrer", "news.example")
    assert q.goal == "Signup"
    assert q.label == "page = /a or /b and referrer = news.example and goal = Signup"
    assert query().label == "" and query().filter is None and query().pages == ()


def test_the_compared_period_is_the_same_view_earlier():
    before = (START - dt.timedelta(days=7), START)
    q = query(NEWS, compared=before)
    earlier = q.before()
    assert (earlier.start, earlier.end, earlier.conditions) == (*before, (NEWS,))
    assert earlier.compared is None and earlier.before() is None
    assert hash(q) != hash(earlier)              # a cache key each


def test_the_url_becomes_the_value_once_and_every_callback_shares_it(app, tmp_path,
                                                                     monkeypatch):
    """The chart, the panels, the controls and the notes of one URL: one parse."""
    ingest_sample(get_services(app.server).db, "s", tmp_path)
    built = []
    read = view_module._read_url
    monkeypatch.setattr(view_module, "_read_url",
                        lambda db, search, query: built.append(search) or read(db, search,
                                                                               query))
    search = "?site=s&tz=UTC&range=7d&page=/&filter=referrer:(direct)&compare=1"
    history_page = page_module("history")
    out = history_page.render(search)
    panels = history_panels.render_panels(search)
    history_page.sync_controls(search, {})
    assert len(built) == 1
    q = view_module.history_view(search).q
    assert q.conditions == (Condition(PAGE, ("/",)), Condition("referrer", ("(direct)",)))
    assert q.compared is not None and q.humans
    assert out["alert"] is None and panels["key"] == history_panels.panels_key(q)


def test_panels_are_not_sent_again_when_the_url_changes_nothing_they_show(app, tmp_path):
    ingest_sample(get_services(app.server).db, "s", tmp_path)
    first = history_panels.render_panels("?site=s&tz=UTC&range=7d")
    again = history_panels.render_panels("?site=s&tz=UTC&range=7d&gran=day&metric=visits"
                                         "&theme=dark", first["key"])
    assert again == dict.fromkeys(history_panels.PANEL_OUTPUTS, no_update)
    other = history_panels.render_panels("?site=s&tz=UTC&range=30d", first["key"])
    assert other["key"] != first["key"] and other["panels"] is not no_update


def test_the_controls_follow_the_url_and_leave_alone_what_they_show(app, tmp_path):
    """The back button moves the page in place: the controls are put in step with the
    URL, and only those showing something else are set (each set runs its callback)."""
    ingest_sample(get_services(app.server).db, "s", tmp_path)
    history_page = page_module("history")
    wanted = history_page.controls_in("?site=s&tz=UTC&range=30d&gran=day&bots=1")
    assert (wanted["preset"], wanted["granularity"], wanted["bots"]) == ("30d", "day", ["1"])
    out = history_page.sync_controls("?site=s&tz=UTC&range=30d&gran=day&bots=1",
                                     {**wanted, "granularity": "auto", "bots": []})
    assert out["granularity"] == "day" and out["bots"] == ["1"]
    assert all(out[name] is no_update for name in out if name not in ("granularity",
                                                                      "bots"))
    out = history_page.sync_controls("?site=s&tz=Mars/Olympus", wanted)
    assert set(out.values()) == {no_update}
