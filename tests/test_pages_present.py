"""dashboard/pages/present/page.py: the presenter's lists, views and layout as plain functions."""

import datetime as dt

import time_machine
from dashkit import page_module
from dimkit import ingest_sample

from dashboard.services import get_services


def test_top_pages_today_are_ranked_as_live_ranks_them(app, tmp_path, frozen_clock):
    """People's page views: Googlebot's hits on / and the stylesheet are left out."""
    present = page_module("present")
    now = dt.datetime.now(dt.UTC)
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    start = max(midnight, now - dt.timedelta(minutes=2)).replace(microsecond=0)
    ingest_sample(get_services(app.server).db, "s", tmp_path, start=start,
                  step=dt.timedelta(seconds=1))
    _, bars = present.refresh_views(0, "dark", "?site=s&tz=UTC")
    bar = bars["data"][0]
    assert dict(zip(bar["y"], bar["x"], strict=True)) == {"/": 40, "/about": 20, "/missing": 5}


def test_the_side_list_is_lives_top_pages_today(app, tmp_path):
    """The list beside the line ranked .woff2 fonts and bots' hits (every hit of the last
    5 minutes); it now shows what Live shows, read by the same function."""
    from dashboard import reads

    present = page_module("present")
    now = dt.datetime(2026, 11, 20, 10, 30, 20, tzinfo=dt.UTC)
    with time_machine.travel(now, tick=False):
        ingest_sample(get_services(app.server).db, "s", tmp_path,
                      start=now - dt.timedelta(minutes=2), step=dt.timedelta(seconds=1))
        _, top = present.refresh_feed(0, "?site=s&tz=UTC")
        live = reads.live_snapshot("s", (), "UTC", 60).top
    assert [item.key for item in top] == ["p:/", "p:/about", "p:/missing"]   # no /style.css
    assert [item.key for item in top] == [f"p:{page}" for page in live.index]
    assert top[0].children[2].children == "40"                 # Googlebot's 15 left out


def test_the_toast_is_in_the_header_flow(app):
    """What s/g did shows in the header, not over the chart's axis."""
    root = page_module("present").layout()
    header = root.children[0]
    assert "present-toast" in [getattr(child, "id", None) for child in header.children]


def test_with_visits_1_the_people_s_card_shows_the_visits_of_the_last_30_minutes(
        app, frozen_clock):
    """``&visits=1``: the visits begun in the last 30 minutes, cut from the raw events,
    in place of the visitors now."""
    from queries.events.writer import EventWriter

    present = page_module("present")
    services = get_services(app.server)
    now = dt.datetime.now(dt.UTC)
    writer = EventWriter(services.db)
    for minutes, host in ((-50, 1), (-20, 1), (-10, 2), (-5, 3), (-4, 3)):
        when = now + dt.timedelta(minutes=minutes)
        writer.add({"time": when, "site": "s", "host": f"203.0.113.{host}", "method": "GET",
                    "path": "/", "query": "", "status": 200, "bytes": 1, "referrer": "-",
                    "user_agent": "Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Firefox/127.0"})
        services.recorder.record("s", "/", when)
    writer.close()
    services.recorder.flush()
    cards, _ = present.refresh_kpis(0, "?site=s&tz=UTC&visits=1")
    texts = {card.id: card.children[1].children for card in cards}
    assert texts["present-kpi-visits"] == "2"       # 1's visit began 50 minutes ago
    cards, _ = present.refresh_kpis(0, "?site=s&tz=UTC")
    assert "present-kpi-active" in {card.id for card in cards}
