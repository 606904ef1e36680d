"""History panels without a browser: the filter's URL validation, the raw-event panels of
a filtered view (every backend), and what the panels and chart count."""

import datetime as dt

import pandas as pd
import pytest
from dimkit import BOTS, LINES, NEWS, TOTAL, ingest_sample

from components.statictable import rebuilt
from dashboard import reads
from dashboard.pages.history import breakdowns as breakdown_view
from dashboard.pages.history import panels as history_panels
from dashboard.pages.history.url import Options
from dashboard.pages.history.view import conditions_of
from dashboard.state import filter_pair, parse_search
from queries import InvalidRangeError
from queries.reads.filtered import filtered_breakdowns
from queries.reads.history import Figures, label
from queries.reads.query import Query
from queries.stats import schema

pytestmark = pytest.mark.usefixtures("frozen_clock")   # the same days at any hour


def compute(shown, options, compared=None, tz="UTC", pages=()):
    """The panels and KPIs of a period, against ``compared`` (the previous one)."""
    compared = compared or shown.previous(tz)
    return breakdown_view.compute_panels(query_of(shown, options, compared, tz, pages))


def query_of(shown, options, compared=None, tz="UTC", pages=()):
    """The query value of a view of site ``s`` (as ``history_view`` builds it)."""
    return Query("s", shown.start, shown.end, shown.granularity, tz,
                 conditions_of(tuple(pages), options), options.humans, options.assets,
                 compared=None if compared is None else (compared.start, compared.end),
                 now=reads.now(60))


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


def _filtered(app, tmp_path, search: str):
    """The panels and the rendered KPIs, bot share and notes of a filtered view."""
    from dashboard.pages.history.panels import render_panels
    from dashboard.pages.history.url import shown_period
    from dashboard.services import get_services

    ingest_sample(get_services(app.server).db, "s", tmp_path)
    query = parse_search(search)
    panels = compute(shown_period(query), Options.from_query(query))
    return panels, render_panels(search)


def _cards(out) -> list:
    """The KPI cards of ``render_panels`` (drawn by the browser) or of ``_kpis``."""
    kpis = out["kpis"]
    return kpis if isinstance(kpis, list) else rebuilt(kpis)


def _kpi(out, name: str) -> tuple[str, str]:
    """A KPI card's value and note text."""
    for card in _cards(out):
        value = card.children[1]
        if value.id == f"history-kpi-{name}":
            note = card.children[2].children
            return value.children, note[1]
    raise AssertionError(name)


@pytest.mark.parametrize(("search", "errors", "share", "events"), [
    # (direct): 10 + 5 (404) + 8 human hits, 15 Googlebot ones; bots follow the counters.
    ("?site=s&range=7d&filter=referrer:(direct)", 5 / 23, 15 / 38, True),
    ("?site=s&range=7d&filter=referrer:(direct)&bots=1", 5 / 38, 15 / 38, True),
    ("?site=s&range=7d&filter=referrer:news.example", 0.0, 0.0, True),
    ("?site=s&range=7d&filter=browser:Chrome", 5 / 53, 0.0, True),
    ("?site=s&range=7d&filter=status:404", 1.0, 0.0, False),
    ("?site=s&range=7d&filter=bot:bot", 0.0, 1.0, False),
    ("?site=s&range=7d&filter=bot:human", 5 / 73, 0.0, False),
])
def test_the_error_rate_and_bot_share_follow_the_filter(app, tmp_path, search, errors,
                                                        share, events):
    panels, out = _filtered(app, tmp_path, search)
    assert panels.current.errors == pytest.approx(errors)
    assert panels.bot_share == pytest.approx(share)
    assert panels.current.errors_from_events is events
    name = label(filter_pair(parse_search(search)), False)
    assert out["share"].startswith(f"{share:.0%} bots") and name in out["share"]
    rate, note = _kpi(out, "errors")
    assert rate == f"{100 * errors:.1f} %"
    assert ("from raw events" in note) is events
    if events:
        assert any("4xx/5xx rate" in str(n.children) for n in out["notes"])


def test_without_raw_events_the_filtered_error_rate_says_it_cannot_follow(app, tmp_path):
    from dashboard.pages.history.panels import render_panels
    from dashboard.services import get_services

    db = get_services(app.server).db
    ingest_sample(db, "s", tmp_path)
    db[schema.EVENTS].delete_many({})
    out = render_panels("?site=s&range=7d&filter=referrer:(direct)")
    assert _kpi(out, "errors")[0] == "–" and _change(out, "errors") == "–"   # not "new"
    said = str(out["panels"])
    assert "No 404 in this range" not in said and "No hits" not in said
    assert said.count("No raw events are kept of these hits") == 1 + len(
        breakdown_view.DIMENSION_PANELS) + 1          # every panel and the 404 list
    assert any("cannot follow referrer = (direct)" in str(n.children) for n in out["notes"])
    assert out["share"].startswith("39% bots among referrer = (direct)")   # counters


def test_kpis_are_the_charts_totals_against_the_same_span_before(app, tmp_path):
    """Today to 01:30 against yesterday to 01:30: the KPIs' hits are the chart's totals
    (people), the change theirs, the hour still filling counted on both sides."""
    from dashboard.ranges import Period
    from dashboard.services import get_services

    db = get_services(app.server).db
    today = dt.datetime.now(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    yesterday = today - dt.timedelta(days=1)
    ingest_sample(db, "s", tmp_path, start=yesterday, step=dt.timedelta(minutes=5))
    ingest_sample(db, "s", tmp_path, start=today, step=dt.timedelta(minutes=1))
    humans = Options(None, False, False)
    shown = Period(today, today + dt.timedelta(hours=1, minutes=30), "minute")
    view = compute(shown, humans)
    assert view.current.hits == TOTAL - BOTS
    # Yesterday a line every 5 minutes: 18 of each group's first 60 by 01:30.
    assert view.previous.hits == sum(min(count, 18) for count, *_, agent in LINES
                                     if "Googlebot" not in agent)
    cards = {"kpis": history_panels._kpis(view, humans=True, pages=False)}
    assert _change(cards, "hits") != "–"
    assert _kpi(cards, "errors")[1].endswith("(humans)")


def test_the_human_visitors_kpi_of_part_of_a_day_is_its_hours_own(app):
    """Two people make five hits at 00:xx and five others come at 05:xx: 00:00-01:00
    has two human visitors (the value sketches, per day at the finest, would say the
    day's seven, cut to the five hits), a bot left out."""
    from dashboard.ranges import Period
    from dashboard.services import get_services
    from queries.counting import DimensionRecorder
    from queries.dimensions import classify

    db = get_services(app.server).db
    day = dt.datetime(2026, 3, 14, tzinfo=dt.UTC)
    agent = "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0"
    hits = ([(0, "81.0.0.1", agent)] * 3 + [(0, "81.0.0.2", agent)] * 2
            + [(0, "66.249.66.1", "Googlebot/2.1 (+http://www.google.com/bot.html)")]
            + [(5, f"81.0.0.{i}", agent) for i in range(3, 8)])
    with DimensionRecorder(db, flush_interval=3600) as recorder:
        for hour, address, who in hits:
            recorder.record("s", "/", day.replace(hour=hour, minute=10),
                            classify("s", "/", agent=who, address=address))
    shown = Period(day, day + dt.timedelta(hours=1), "minute")
    view = compute(shown, Options(None, False, False))
    assert view.current.visitors == 2
    view = compute(shown, Options(None, True, False))
    assert view.current.visitors == 3


def _change(out, name: str) -> str:
    for card in _cards(out):
        if card.children[1].id == f"history-kpi-{name}":
            return card.children[2].children[0].children
    raise AssertionError(name)


def test_a_change_is_new_only_with_something_now_and_nothing_before():
    now, before = Figures(12, 3, None), Figures(0, 0, 0.5)
    visits = breakdown_view.Totals(3, 3, 0, 3, 3, True)
    none = breakdown_view.Totals(0, 0, 0, 0, 0, True)
    panels = breakdown_view.Panels({}, None, now, before, 0.0, (), visits, none, {}, None)
    out = {"kpis": history_panels._kpis(panels, humans=True, pages=False, filtered=False)}
    assert _change(out, "hits") == "new" and _change(out, "visitors") == "new"
    assert _change(out, "visits") == "new"
    assert _change(out, "pervisit") == "–"            # nothing before to divide
    assert _change(out, "errors") == "–"              # no rate now: not "new"


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
    assert _change(cards, "hits") != "–"
    db[schema.EVENTS].delete_many({})
    get_services(app.server).cache.clear()
    part, cards = out(day, day + dt.timedelta(hours=13))
    assert not part.current.visitors_exact and _change(cards, "visitors") == "–"
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


def _panel_rows(out, dim: str) -> dict[str, int]:
    """A rendered panel's rows: value -> hits."""
    for section in rebuilt(out["panels"]):
        if section.id == f"history-panel-{dim}":
            rows = section.children[0].children[1].children
            return {tr.children[0].children[-1].title: int(tr.children[1].children
                                                             .replace(",", ""))
                    for tr in rows if len(tr.children) > 2}
    raise AssertionError(dim)


def _panel_text(out, dim: str) -> str:
    for section in rebuilt(out["panels"]):
        if section.id == f"history-panel-{dim}":
            return str(section)
    raise AssertionError(dim)


def test_a_page_is_a_condition_like_any_other_kpis_and_panels_are_its_own(app, tmp_path):
    """A click on a page showed only its chart; the KPIs said "(whole
    site)" and every panel was the whole site's. "/" has 30 news.example and 10 direct
    human hits (and 15 of Googlebot's, left out), each from its own address."""
    from dashboard.pages.history.panels import render_panels
    from dashboard.services import get_services

    ingest_sample(get_services(app.server).db, "s", tmp_path)
    out = render_panels("?site=s&range=7d&page=/")
    assert _kpi(out, "hits") == ("40", " vs previous period")
    assert _kpi(out, "visitors")[0] == "40"
    assert _kpi(out, "errors")[0] == "0.0 %"
    assert _panel_rows(out, "referrer") == {"news.example": 30, "(direct)": 10}
    assert _panel_rows(out, "browser") == {"Chrome": 40}
    assert _panel_rows(out, "page") == {"/": 40}
    assert out["share"] == "27% bots among page = / (left out)"
    assert "page = /" in str(out["chip"])
    about = render_panels("?site=s&range=7d&page=/about")
    assert _kpi(about, "hits")[0] == "20" and _kpi(about, "visitors")[0] == "20"
    assert _panel_rows(about, "referrer") == {"search.example": 20}
    assert _panel_rows(about, "device") == {"mobile": 20}
    style = render_panels("?site=s&range=7d&page=/style.css")    # an asset, named
    assert _panel_rows(style, "page") == {"/style.css": 8}


def test_a_page_and_a_referrer_count_the_hits_meeting_both(app, tmp_path):
    """Conditions add up: the chart, the KPIs and the panels of "/" from news.example,
    from raw events (no counter holds the two together), and the page says so."""
    from dashboard.pages.history.panels import render_panels
    from dashboard.pages.history.view import compute_view
    from dashboard.services import get_services

    ingest_sample(get_services(app.server).db, "s", tmp_path)
    search = "?site=s&range=7d&page=/&filter=referrer:(direct)"
    view = compute_view(search)
    assert view.chart.source == "raw events" and int(view.current.to_numpy().sum()) == 10
    out = render_panels(search)
    assert _kpi(out, "hits")[0] == "10" and _kpi(out, "visitors")[0] == "10"
    assert _panel_rows(out, "referrer") == {"(direct)": 10}
    assert out["share"] == "60% bots among page = / and referrer = (direct) (left out)"
    notes = " ".join(str(n.children) for n in out["notes"])
    assert "The panels, the visitors, the 4xx/5xx rate and the chart: page = / and " \
           "referrer = (direct): counted from raw events" in notes


def test_under_a_referrer_every_panel_counts_its_hits_or_says_whose_it_shows(app, tmp_path):
    """Under a referrer, the entry and exit pages (and the goals, and
    the visits' KPIs) were the whole site's and said nothing. Each panel of hits counts
    the filtered hits; those of visits say they are all of the site's."""
    from dashboard.pages.history.panels import render_panels
    from dashboard.services import get_services

    ingest_sample(get_services(app.server).db, "s", tmp_path)
    out = render_panels("?site=s&range=7d&filter=referrer:news.example")
    for dim in breakdown_view.PANELS:
        rows = _panel_rows(out, dim)
        assert sum(rows.values()) in (NEWS, 0), dim          # none: utm_* of no campaign
    assert _panel_rows(out, "referrer") == {"news.example": NEWS}
    for dim in ("entry", "exit", "goals"):
        assert ("All of the site's visits: referrer = news.example does not apply to "
                "visits.") in _panel_text(out, dim), dim
    for name in ("visits", "pageviews", "pervisit", "bounce", "duration"):
        assert _kpi(out, name)[1].endswith("(whole site)"), name
    notes = " ".join(str(n.children) for n in out["notes"])
    assert "Visits, entry and exit pages, goals: all of the site's visits" in notes
    plain = render_panels("?site=s&range=7d")
    assert "does not apply" not in str(plain["panels"])
