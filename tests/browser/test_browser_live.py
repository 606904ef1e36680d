"""The live page in Chromium: new hits appear, pause holds, the browser's zone is used."""

import datetime as dt
from urllib.parse import parse_qs, urlsplit

import pytest
from browserkit import until
from dashkit import seed

from dashboard.services import get_services

pytestmark = pytest.mark.usefixtures("frozen_clock")   # the same days at any hour

CHART_TOTAL = """
const plot = document.querySelector('#live-graph .js-plotly-plot');
if (!plot || !plot._fullData || !plot._fullData.length) { return -1; }
return Array.from(plot._fullData[0].y).reduce((a, b) => a + b, 0);
"""


def open_page(dash_duo, app, path):
    dash_duo.start_server(app, path=path)


def test_hits_recorded_during_the_test_show_in_the_kpis_and_the_chart(app, dash_duo):
    services = get_services(app.server)
    seed(services.db, "shop", [(dt.datetime.now(dt.UTC) - dt.timedelta(minutes=10), "/cart", 2)])
    open_page(dash_duo, app, "/?site=shop&tz=UTC")
    dash_duo.wait_for_text_to_equal("#live-kpi-hour", "2")

    services.recorder.record("shop", "/cart", n=5)  # flushed by the recorder within 1 s
    dash_duo.wait_for_text_to_equal("#live-kpi-hour", "7")
    until(lambda: dash_duo.driver.execute_script(CHART_TOTAL) == 7,
          msg="the chart did not show the new hits")
    dash_duo.wait_for_contains_text("#live-freshness", "updated")

    dash_duo.find_element("#live-pause").click()
    dash_duo.wait_for_text_to_equal("#live-pause", "Resume")
    dash_duo.wait_for_contains_text("#live-freshness", "Paused")
    services.recorder.record("shop", "/cart", n=1)
    services.recorder.flush()
    dash_duo.find_element("#live-window label:first-child").click()  # 15 min: a new query
    dash_duo.wait_for_text_to_equal("#live-kpi-hour", "8")
    assert "window=15" in dash_duo.driver.current_url
    dash_duo.find_element("#live-pause").click()
    dash_duo.wait_for_text_to_equal("#live-pause", "Pause")
    assert dash_duo.get_logs() == []


def test_time_zone_defaults_to_the_browsers(app, dash_duo):
    seed(get_services(app.server).db, "shop", [(dt.datetime.now(dt.UTC), "/", 1)])
    dash_duo.start_server(app, navigate=False)
    dash_duo.driver.execute_cdp_cmd("Emulation.setTimezoneOverride",
                                    {"timezoneId": "America/New_York"})
    dash_duo.driver.get(dash_duo.server_url + "/?site=shop")
    dash_duo.wait_for_contains_text("#live-kpis", "since midnight, America/New_York")
    dash_duo.wait_for_text_to_equal("#shell-tz", "America/New_York")
    query = parse_qs(urlsplit(dash_duo.driver.current_url).query)
    assert query["tz"] == ["America/New_York"]
    assert dash_duo.get_logs() == []
