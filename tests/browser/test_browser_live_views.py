"""The live page in Chromium: zoom kept across refreshes, the recent feed's dates and
beacon rows, whole-number ticks, an unknown site."""

import datetime as dt

import pytest
import requests
from browserkit import until
from dashkit import register_sites, seed
from selenium.webdriver.common.action_chains import ActionChains

from dashboard.services import get_services
from queries.events.writer import EventWriter

pytestmark = pytest.mark.usefixtures("frozen_clock")   # the same days at any hour

X_RANGE = """
const plot = document.querySelector('#live-graph .js-plotly-plot');
return plot && plot._fullLayout && plot._fullLayout.xaxis
    ? plot._fullLayout.xaxis.range.slice() : null;
"""
REFRESHES = "return window.__refreshes || 0;"
COUNT_REFRESHES = """
const plot = document.querySelector('#live-graph .js-plotly-plot');
window.__refreshes = 0;
plot.on('plotly_react', () => { window.__refreshes += 1; });
"""


def open_page(dash_duo, app, path):
    dash_duo.start_server(app, path=path)


def chart_ready(dash_duo):
    until(lambda: dash_duo.driver.execute_script(
        "const p = document.querySelector('#live-graph .js-plotly-plot');"
        "return !!(p && p._fullData && p._fullData.length && p._fullData[0].x"
        " && p._fullData[0].x.length);"))


def test_drag_zoom_is_kept_across_refreshes_until_reset(app, dash_duo):
    services = get_services(app.server)
    now = dt.datetime.now(dt.UTC)
    seed(services.db, "shop", [(now - dt.timedelta(minutes=m), "/", m % 4 + 1)
                               for m in range(1, 60)])
    open_page(dash_duo, app, "/?site=shop&tz=UTC")
    chart_ready(dash_duo)
    full = dash_duo.driver.execute_script(X_RANGE)
    drag = dash_duo.find_element("#live-graph .nsewdrag")
    dash_duo.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", drag)
    width = drag.size["width"]
    ActionChains(dash_duo.driver).move_to_element(drag).move_by_offset(-width // 4, 0) \
        .click_and_hold().move_by_offset(width // 6, 0).move_by_offset(width // 6, 0) \
        .release().perform()
    until(lambda: dash_duo.driver.execute_script(X_RANGE) != full)
    zoomed = dash_duo.driver.execute_script(X_RANGE)
    dash_duo.driver.execute_script(COUNT_REFRESHES)
    services.recorder.record("shop", "/", n=3)
    # Two refreshes later (one every 2 s) the zoom is still the user's.
    until(lambda: dash_duo.driver.execute_script(REFRESHES) >= 2)
    assert dash_duo.driver.execute_script(X_RANGE) == zoomed
    # A double click (Plotly's reset) gives the whole window back.
    ActionChains(dash_duo.driver).double_click(
        dash_duo.find_element("#live-graph .nsewdrag")).perform()
    until(lambda: dash_duo.driver.execute_script(X_RANGE) != zoomed)
    whole = dash_duo.driver.execute_script(X_RANGE)
    assert whole[1] > zoomed[1] and whole[0] < zoomed[0]
    assert dash_duo.get_logs() == []


def test_recent_hits_show_dates_not_today_and_beacon_rows_as_sent(app, dash_duo):
    services = get_services(app.server)
    old = dt.datetime(2015, 5, 17, 10, 5, 3, tzinfo=dt.UTC)
    seed(services.db, "shop", [(old, "/old", 1)])
    register_sites(app, "shop")
    writer = EventWriter(services.db, clock=lambda: old)
    writer.add({"time": old, "site": "shop", "host": "", "method": "GET", "path": "/old",
                "query": "", "status": 200, "bytes": 512, "referrer": None, "user_agent": None})
    writer.flush()
    open_page(dash_duo, app, "/?site=shop&tz=UTC")
    dash_duo.wait_for_contains_text("#live-recent-table", "/old")
    assert requests.post(dash_duo.server_url + "/hit", data='{"site": "shop", "page": "/new"}',
                         timeout=12).status_code == 204
    dash_duo.wait_for_contains_text("#live-recent-table", "/new")
    rows = until(lambda: _rows(dash_duo))      # the feed refreshes every 2 s
    new, old_row = rows[0], rows[-1]
    assert old_row[0] == "2015-05-17 10:05:03.000" and old_row[1:4] == ["/old", "GET", "200"]
    assert len(new[0]) == len("10:05:03.000")  # today: the time alone
    assert new[1:4] == ["/new", "POST", "–"]
    assert dash_duo.get_logs() == []


def _rows(dash_duo) -> list[list[str]]:
    """The recent-hits table's cells."""
    return [[cell.text for cell in row.find_elements("css selector", "td")]
            for row in dash_duo.find_elements("#live-recent-table tbody tr")]


def test_small_counts_have_whole_number_ticks(app, dash_duo):
    seed(get_services(app.server).db, "shop",
         [(dt.datetime.now(dt.UTC) - dt.timedelta(minutes=3), "/", 3)])
    open_page(dash_duo, app, "/?site=shop&tz=UTC")
    chart_ready(dash_duo)
    ticks = dash_duo.driver.execute_script(
        "return Array.from(document.querySelectorAll('#live-graph .ytick text'))"
        ".map(t => t.textContent);")
    assert ticks and len(ticks) == len(set(ticks)), ticks
    assert all(t.isdigit() for t in ticks)
    assert dash_duo.get_logs() == []


def test_an_unknown_site_says_it_has_no_data_and_lists_the_known_ones(app, dash_duo):
    seed(get_services(app.server).db, "shop", [(dt.datetime.now(dt.UTC), "/", 1)])
    open_page(dash_duo, app, "/?site=nosuch&tz=UTC")
    dash_duo.wait_for_contains_text("#live-alert", "'nosuch' has no data")
    dash_duo.wait_for_contains_text("#unknown-site", "shop")
    # Read afresh: the KPI cards are redrawn every refresh (a found element goes stale).
    dash_duo.wait_for_text_to_equal("#live-kpi-today", "–")
    assert dash_duo.get_logs() == []
