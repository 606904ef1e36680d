"""History's KPIs without a browser: the error rate and bot share follow a filter, the
KPIs are the chart's totals against the same span before, a part of a day counts its own
hours' visitors, and a change is "new" only with nothing before."""


import datetime as dt

import pytest
from dimkit import BOTS, LINES, TOTAL, ingest_sample
from historykit import change_shown, compute, kpi

from dashboard.pages.history import breakdowns as breakdown_view
from dashboard.pages.history import panels as history_panels
from dashboard.pages.history.url import Options
from dashboard.state import filter_pair, parse_search
from queries.reads.history import Figures, label
from queries.stats import schema

pytestmark = pytest.mark.usefixtures("frozen_clock")   # the same days at any hour


def _filtered(app, tmp_path, search: str):
    """The panels and the rendered KPIs, bot share and notes of a filtered view."""
    from dashboard.pages.history.panels import render_panels
    from dashboard.pages.history.url import shown_period
    from dashboard.services import get_services

    ingest_sample(get_services(app.server).db, "s", tmp_path)
    query = parse_search(search)
    panels = compute(shown_period(query), Options.from_query(query))
    return panels, render_panels(search)


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
    rate, note = kpi(out, "errors")
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
    assert kpi(out, "errors")[0] == "–" and change_shown(out, "errors") == "–"   # not "new"
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
    assert change_shown(cards, "hits") != "–"
    assert kpi(cards, "errors")[1].endswith("(humans)")


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


def test_a_change_is_new_only_with_something_now_and_nothing_before():
    now, before = Figures(12, 3, None), Figures(0, 0, 0.5)
    visits = breakdown_view.Totals(3, 3, 0, 3, 3, True)
    none = breakdown_view.Totals(0, 0, 0, 0, 0, True)
    panels = breakdown_view.Panels({}, None, now, before, 0.0, (), visits, none, {}, None)
    out = {"kpis": history_panels._kpis(panels, humans=True, pages=False, filtered=False)}
    assert change_shown(out, "hits") == "new" and change_shown(out, "visitors") == "new"
    assert change_shown(out, "visits") == "new"
    assert change_shown(out, "pervisit") == "–"            # nothing before to divide
    assert change_shown(out, "errors") == "–"              # no rate now: not "new"
