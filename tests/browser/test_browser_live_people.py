"""Live's people in Chromium: visitors active now and top referrers of the last hour,
and top pages today, humans unless the panel's link includes bots (kept in the URL: a
reload keeps it); a referrer links to History filtered by it."""

import datetime as dt
import os
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import time_machine
from browserkit import click, until
from dimkit import BOTS, NEWS, TOTAL, ingest_sample

from dashboard.services import get_services

ROW = """const link = document.querySelector("#live-referrers-panel a[title='news.example']");
return link ? link.closest('tr').innerText : null;"""
DIRECT = ROW.replace("news.example", "(direct)")
# (direct): 10 + 5 + 8 human lines and the 15 Googlebot ones, one address each.
DIRECT_HUMANS = 23


TOP = """const cell = document.querySelector('#live-top tbody tr td.num');
return cell ? cell.innerText : null;"""
# The server's clock starts here and runs on: the sample's 150 seconds are today's.
NOW = dt.datetime(2026, 3, 12, 14, 20, tzinfo=dt.UTC)


def top_hits(dash_duo, expected: str) -> None:
    """Top pages today follow the same link: / has 40 human hits and 15 Googlebot's."""
    until(lambda: dash_duo.driver.execute_script(TOP) == expected)


def direct_hits(dash_duo):
    row = dash_duo.driver.execute_script(DIRECT) or ""
    return row.split()[1] if len(row.split()) > 1 else None


@time_machine.travel(NOW, tick=True)
def test_active_visitors_and_top_referrers_now(app, dash_duo, tmp_path):
    start = dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(seconds=150)
    ingest_sample(get_services(app.server).db, "s", tmp_path, start, dt.timedelta(seconds=1))
    dash_duo.start_server(app, path="/?site=s&tz=UTC")
    # Each sample line has its own address: every human one is a visitor of the last 5
    # minutes; bots are left out until the panel's link includes them.
    dash_duo.wait_for_text_to_equal("#live-kpi-active", f"{TOTAL - BOTS:,}")
    # The panel is redrawn every refresh: read its row in one script call.
    until(lambda: f"{NEWS:,}" in (dash_duo.driver.execute_script(ROW) or ""))
    until(lambda: direct_hits(dash_duo) == f"{DIRECT_HUMANS:,}")
    top_hits(dash_duo, "40")
    click(dash_duo, "#live-bots-toggle")
    until(lambda: "bots=1" in dash_duo.driver.current_url)
    dash_duo.wait_for_text_to_equal("#live-kpi-active", f"{TOTAL:,}")
    until(lambda: direct_hits(dash_duo) == f"{DIRECT_HUMANS + BOTS:,}")
    top_hits(dash_duo, "55")
    dash_duo.driver.refresh()
    dash_duo.wait_for_text_to_equal("#live-kpi-active", f"{TOTAL:,}")
    dash_duo.wait_for_contains_text("#live-bots", "Bots included")
    top_hits(dash_duo, "55")
    click(dash_duo, "#live-bots-toggle")
    dash_duo.wait_for_text_to_equal("#live-kpi-active", f"{TOTAL - BOTS:,}")
    until(lambda: direct_hits(dash_duo) == f"{DIRECT_HUMANS:,}")
    top_hits(dash_duo, "40")
    shots = os.environ.get("HITBOARD_SCREENSHOTS")
    if shots:  # for a person to look at, light and dark, wide and phone (not assertions)
        for theme in ("light", "dark"):
            for width in (1280, 390):
                dash_duo.driver.set_window_size(width, 1000)
                dash_duo.driver.get(dash_duo.server_url + f"/?site=s&tz=UTC&theme={theme}")
                dash_duo.wait_for_contains_text("#live-referrers-panel", "news.example")
                height = dash_duo.driver.execute_script("return document.body.scrollHeight")
                dash_duo.driver.set_window_size(width, height + 100)
                dash_duo.driver.save_screenshot(str(Path(shots) / f"live-{theme}-{width}.png"))
        dash_duo.driver.set_window_size(1280, 1000)
        dash_duo.wait_for_contains_text("#live-referrers-panel", "news.example")
    dash_duo.find_element("#live-pause").click()  # no redraw under the click
    dash_duo.wait_for_text_to_equal("#live-pause", "Resume")
    dash_duo.find_element("#live-referrers-panel a[title='news.example']").click()
    until(lambda: urlsplit(dash_duo.driver.current_url).path == "/history")
    query = parse_qs(urlsplit(dash_duo.driver.current_url).query)
    assert query["filter"] == ["referrer:news.example"] and query["site"] == ["s"]
    dash_duo.wait_for_contains_text("#history-chip", "referrer = news.example")
    assert dash_duo.get_logs() == []


def test_visits_begun_in_the_last_30_minutes_leave_the_card_as_time_passes(app, dash_duo):
    """Two people's visits, begun 29.5 and 5 minutes ago: a minute later the first one
    began more than 30 minutes ago, and the card, refreshed by itself, says so."""
    from queries.events.writer import EventWriter

    with time_machine.travel(NOW, tick=True) as traveller:
        services = get_services(app.server)
        writer = EventWriter(services.db)
        for ago, host in ((dt.timedelta(minutes=29, seconds=30), 1),
                          (dt.timedelta(minutes=5), 2)):
            when = dt.datetime.now(dt.UTC) - ago
            writer.add({"time": when, "site": "s", "host": f"203.0.113.{host}",
                        "method": "GET", "path": "/", "query": "", "status": 200,
                        "bytes": 1, "referrer": "-",
                        "user_agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/127.0"})
            services.recorder.record("s", "/", when)
        writer.close()
        services.recorder.flush()
        dash_duo.start_server(app, path="/?site=s&tz=UTC")
        dash_duo.wait_for_text_to_equal("#live-kpi-visits", "2")
        traveller.shift(dt.timedelta(minutes=1))
        dash_duo.wait_for_text_to_equal("#live-kpi-visits", "1")
        dash_duo.driver.refresh()
        dash_duo.wait_for_text_to_equal("#live-kpi-visits", "1")
        assert dash_duo.get_logs() == []
