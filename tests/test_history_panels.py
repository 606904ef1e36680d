"""History panels without a browser: the filter's URL validation, the raw-event panels of
a filtered view (every backend), and what the panels and chart count."""

import datetime as dt

import pandas as pd
import pytest
from dimkit import BOTS, NEWS, TOTAL, ingest_sample
from historykit import change_shown, compute

from dashboard.pages.history import breakdowns as breakdown_view
from dashboard.pages.history import panels as history_panels
from dashboard.pages.history.url import Options
from dashboard.state import filter_pair, parse_search
from queries import InvalidRangeError
from queries.reads.filtered import filtered_breakdowns
from queries.stats import schema

pytestmark = pytest.mark.usefixtures("frozen_clock")   # the same days at any hour


@pytest.mark.parametrize(("search", "said"), [
    ("?filter=nope:x", "unknown dimension"),
    ("?filter=referrer", "dimension:value"),
    ("?filter=referrer:" + "x" * 201, "dimension:value"),
    ("?filter=%24where:x", "unknown dimension"),
])
def test_a_bad_filter_says_why(search, said):
    with pytest.raises(InvalidRangeError, match=said):
        Options.from_query(parse_search(search))


def test_a_filter_value_keeps_its_colons_and_people_are_counted_unless_bots_are_asked():
    query = parse_search("?filter=utm_campaign:a:b.$c&bots=1")
    assert filter_pair(query) == ("utm_campaign", "a:b.$c")
    options = Options.from_query(query)
    assert options.bots and options.filter == ("utm_campaign", "a:b.$c")
    assert not options.humans
    assert Options(None, False, False).humans
    assert not Options(("bot", "bot"), False, False).humans     # it counts what it names


def test_filtered_panels_come_from_raw_events(db, tmp_path):
    start = ingest_sample(db, "s", tmp_path)
    end = start + dt.timedelta(days=1)
    found = filtered_breakdowns(db, "s", "referrer", "news.example", start, end,
                                ("browser", "referrer", "status"))
    assert found.hits == NEWS and found.visitors == NEWS
    assert found.panels["browser"].to_dict("records") == [
        {"value": "Chrome", "hits": NEWS, "visitors": NEWS}]
    assert list(found.panels["page"]["value"]) == ["/"]
    assert "raw events" in found.note
    direct = filtered_breakdowns(db, "s", "referrer", "(direct)", start, end, ("browser",))
    with_bots = filtered_breakdowns(db, "s", "referrer", "(direct)", start, end,
                                    ("browser",), humans_only=False)
    assert with_bots.hits - direct.hits == BOTS
    assert "Googlebot" not in set(direct.panels["browser"]["value"])
    assert with_bots.hits <= TOTAL


def test_the_pages_panel_leaves_assets_out_unless_asked(app, tmp_path):
    from dashboard.pages.history.url import shown_period
    from dashboard.services import get_services

    ingest_sample(get_services(app.server).db, "s", tmp_path)
    shown = shown_period(parse_search("?site=s&range=7d"))
    panels = compute(shown, Options(None, False, False))
    assert "/style.css" not in set(panels.frames["page"]["value"])
    assert panels.current.hits == TOTAL - BOTS and panels.bot_share == BOTS / TOTAL
    assert list(panels.not_found["path"]) == ["/missing"]
    with_assets = compute(shown, Options(None, True, True))
    assert "/style.css" in set(with_assets.frames["page"]["value"])
    assert with_assets.current.hits == TOTAL


def test_the_pages_panel_counts_humans_with_visitors_and_old_ranges_say_why_not(
        app, tmp_path):
    """Pages are a dimension: bots left out unless asked for, visitors per page. A range
    counted before the page was a dimension falls back to the hit counters (every hit,
    no visitors) and a note says so."""
    from dashboard.pages.history.url import shown_period
    from dashboard.services import get_services
    from queries.dimensions.counters import COLLECTIONS

    db = get_services(app.server).db
    ingest_sample(db, "s", tmp_path)
    shown = shown_period(parse_search("?site=s&range=7d"))

    def pages(bots):
        panels = compute(shown, Options(None, bots, False))
        return panels.frames["page"].to_dict("records"), panels.notes

    humans, notes = pages(False)
    assert humans == [{"value": "/", "hits": 40, "visitors": 40,      # Googlebot's 15 out
                       "visitors_error": 0},
                      {"value": "/about", "hits": 20, "visitors": 20, "visitors_error": 0},
                      {"value": "/missing", "hits": 5, "visitors": 5, "visitors_error": 0}]
    assert not any("bots included" in note for note in notes)
    everyone, _ = pages(True)
    assert everyone[0] == {"value": "/", "hits": 55, "visitors": 55, "visitors_error": 0}

    for coll in COLLECTIONS:                     # as stored before pages were counted
        db[coll].update_many({}, {"$unset": {"v.page": "", "b.page": ""}})
    get_services(app.server).cache.clear()
    old, notes = pages(False)
    assert old[0]["value"] == "/" and old[0]["hits"] == 55 and pd.isna(old[0]["visitors"])
    assert any("before pages were counted by bot" in note for note in notes)


def test_minutes_stay_minutes_for_humans_and_a_filter_comes_per_hour(app, tmp_path):
    """One population per screen: by minute too, the chart counts people."""
    from dashboard.pages.history.view import compute_view
    from dashboard.services import get_services

    ingest_sample(get_services(app.server).db, "s", tmp_path)
    plain = compute_view("?site=s&range=yesterday&gran=minute")
    assert plain.period.granularity == "minute" and list(plain.current.columns) == ["Humans"]
    assert plain.current.to_numpy().sum() == TOTAL - BOTS
    everyone = compute_view("?site=s&range=yesterday&gran=minute&bots=1")
    assert everyone.current.to_numpy().sum() == TOTAL
    pages = compute_view("?site=s&page=/&range=yesterday&gran=minute")
    assert list(pages.current.columns) == ["/"] and pages.current.to_numpy().sum() == 40
    hourly = compute_view("?site=s&range=yesterday&gran=hour")
    assert list(hourly.current.columns) == ["Humans"]
    assert hourly.current.to_numpy().sum() == TOTAL - BOTS
    filtered = compute_view("?site=s&range=yesterday&gran=minute&filter=referrer:news.example")
    assert filtered.period.granularity == "hour"
    assert filtered.current.to_numpy().sum() == NEWS


def test_panels_kpis_and_a_filtered_chart_count_humans_and_old_stores_say_so(app, tmp_path):
    """Bots off: every dimension panel, the 404 list, the KPIs and a filter's chart count
    humans; on: everyone. Counters stored before bots were counted apart still show,
    their bots counted as humans, and a note says how many."""
    from dashboard.pages.history.view import compute_view, shown_period
    from dashboard.services import get_services
    from queries.dimensions.counters import COLLECTIONS

    db = get_services(app.server).db
    ingest_sample(db, "s", tmp_path)
    shown = shown_period(parse_search("?site=s&range=7d"))

    def panels(bots, pair=None):
        return compute(shown, Options(pair, bots, False))

    humans, everyone = panels(False), panels(True)
    for dim in breakdown_view.DIMENSION_PANELS:
        assert int(everyone.frames[dim]["hits"].sum()) == TOTAL, dim
        assert int(humans.frames[dim]["hits"].sum()) == TOTAL - BOTS, dim
    assert "Googlebot" not in set(humans.frames["browser"]["value"])
    assert humans.current.visitors == TOTAL - BOTS and everyone.current.visitors == TOTAL
    assert not any("counted apart" in note for note in humans.notes)
    direct = panels(False, ("referrer", "(direct)"))
    assert direct.current.hits == 23 and panels(True, ("referrer", "(direct)")).current.hits \
        == 23 + BOTS
    chart = compute_view("?site=s&range=yesterday&gran=hour&filter=referrer:(direct)")
    assert chart.current.to_numpy().sum() == 23
    with_bots = compute_view("?site=s&range=yesterday&gran=hour&filter=referrer:(direct)&bots=1")
    assert with_bots.current.to_numpy().sum() == 23 + BOTS

    for coll in COLLECTIONS:                     # as stored before the split
        db[coll].update_many({}, {"$unset": {"b": "", "bh": ""}})
    get_services(app.server).cache.clear()
    old = panels(False)
    assert int(old.frames["referrer"]["hits"].sum()) == TOTAL
    assert any(f"{BOTS:,} bot hits" in note for note in old.notes)


def test_a_filtered_values_visitors_of_part_of_a_day_come_from_its_raw_events(app,
                                                                               tmp_path):
    """A value's sketches are kept per UTC day: part of a day counts its visitors from
    the raw events of its hours, and compares them; without those events the page says
    the visitors stand for whole days and shows no change."""
    from dashboard.ranges import Period
    from dashboard.services import get_services

    db = get_services(app.server).db
    day = dt.datetime(2026, 3, 14, tzinfo=dt.UTC)
    ingest_sample(db, "s", tmp_path, start=day + dt.timedelta(hours=9))
    filtered = Options(("referrer", "(direct)"), False, False)

    def out(start, end):
        shown = Period(start, end, "hour")
        panels = compute(shown, filtered)
        return panels, {"kpis": history_panels._kpis(panels, humans=True, pages=False)}

    part, cards = out(day, day + dt.timedelta(hours=13))
    assert part.current.visitors == 23 and part.current.visitors_exact
    assert change_shown(cards, "hits") != "–"
    db[schema.EVENTS].delete_many({})
    get_services(app.server).cache.clear()
    part, cards = out(day, day + dt.timedelta(hours=13))
    assert not part.current.visitors_exact and change_shown(cards, "visitors") == "–"
    assert any("whole UTC days" in note for note in part.notes)
    whole, cards = out(day, day + dt.timedelta(days=1))
    assert whole.current.visitors_exact and whole.current.visitors == 23


def test_filtered_panels_with_part_of_their_raw_events_say_what_they_count(app, tmp_path):
    from dashboard.pages.history.url import shown_period
    from dashboard.services import get_services

    db = get_services(app.server).db
    older = ingest_sample(db, "s", tmp_path) - dt.timedelta(days=2)
    db[schema.EVENTS].delete_many({})                 # these hits' raw events are gone
    ingest_sample(db, "s", tmp_path, start=older)
    query = parse_search("?site=s&range=7d&filter=referrer:(direct)")
    panels = compute(shown_period(query), Options.from_query(query))
    assert panels.current.hits == 2 * 23
    assert panels.empty == "None among the 23 of these hits whose raw events are kept."


def test_a_period_cutting_a_quarter_hour_says_its_visits_count_it_whole(app, frozen_clock):
    from dashboard.ranges import Period

    day = dt.datetime(2026, 3, 10, tzinfo=dt.UTC)
    whole = Period(day, day + dt.timedelta(hours=1), "minute")
    people = Options(None, False, False)
    assert not any("quarter hour" in n for n in compute(whole, people).notes)
    cut = Period(day, day + dt.timedelta(minutes=50), "minute")
    before = Period(day - dt.timedelta(days=1), day - dt.timedelta(hours=23, minutes=10),
                    "minute")
    notes = compute(whole, people, before).notes
    assert "Visits: the compared period cuts a quarter hour" in " ".join(notes)
    notes = compute(cut, people, before).notes
    assert "Visits: the range and the compared period cut a quarter hour" in " ".join(notes)
