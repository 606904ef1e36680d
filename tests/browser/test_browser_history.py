"""The historical page in Chromium: totals in a time zone, state in the URL and the back
button, drill-down, CSV download."""

import datetime as dt
import io
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pandas as pd
import pytest
import time_machine
from browserkit import until
from dashkit import layout_draws, noon_hits, seed
from selenium.webdriver.common.action_chains import ActionChains

from dashboard.services import get_services

TOKYO = dt.timezone(dt.timedelta(hours=9))
TOTAL_A = 10 * sum(range(1, 7))  # /a over the last 7 Tokyo days (today has no hits)
# Mid-morning in Tokyo: today has ten hours done and none of its hits yet.
INSTANT = dt.datetime(2026, 3, 14, 10, 30, tzinfo=TOKYO)


@pytest.fixture
def clock(app):
    """The server's clock (its threads run in this process) starts at ``INSTANT`` and
    runs on: no test depends on the hour or the date it runs at."""
    with time_machine.travel(INSTANT, tick=True):
        yield


@pytest.fixture
def seeded(app, clock):
    """Hits at local noon in Tokyo 1..40 days ago: 10·k on /a and k on /b, k days ago."""
    today = dt.datetime.now(TOKYO).date()
    seed(get_services(app.server).db, "s", noon_hits(TOKYO, today, days=40))
    return today


def open_page(dash_duo, app, path):
    dash_duo.start_server(app, path=path)


def url_query(dash_duo):
    return parse_qs(urlsplit(dash_duo.driver.current_url).query)


def checked(dash_duo, group):
    return dash_duo.driver.execute_script(
        f"return document.querySelector('#{group} input:checked').value")


def click_option(dash_duo, group, value):
    dash_duo.find_element(f"#{group} input[value='{value}']").find_element(
        "xpath", "ancestor::label").click()


def point_at(dash_duo, graph, x):
    """Hover the mouse over the point at ``x``; retried, as the plot may still resize."""
    offset_script = """const plot = document.querySelector(arguments[0] + ' .js-plotly-plot');
        const xa = plot._fullLayout.xaxis;
        return xa.l2p(xa.d2l(arguments[1])) - xa._length / 2;"""
    hovered_script = """const plot = document.querySelector(arguments[0] + ' .js-plotly-plot');
        return plot._hoverdata ? plot._hoverdata[0].x : null;"""

    def hovered():
        driver = dash_duo.driver
        drags = dash_duo.find_elements(f"{graph} .nsewdrag")   # none while the plot redraws
        if not drags:
            return False
        drag = drags[0]
        offset = driver.execute_script(offset_script, graph, x)
        ActionChains(driver).move_to_element(drag).move_by_offset(round(offset), 0).perform()
        return driver.execute_script(hovered_script, graph) == x

    until(hovered, msg=f"could not hover the point at {x}")


def test_totals_for_seven_days_in_a_zone_and_the_url_restores_the_view(app, seeded, dash_duo):
    open_page(dash_duo, app, "/history?site=s&page=/a&tz=Asia/Tokyo&range=7d")
    dash_duo.wait_for_contains_text("#history-totals", f"{TOTAL_A:,}")
    dash_duo.wait_for_text_to_equal("#shell-tz", "Asia/Tokyo")
    dash_duo.wait_for_contains_text("#shell-pages", "/a")
    assert checked(dash_duo, "history-range") == "7d"
    assert "Asia/Tokyo" in dash_duo.find_element("#history-period").text

    click_option(dash_duo, "history-range", "30d")
    dash_duo.wait_for_contains_text("#history-totals", f"{10 * sum(range(1, 30)):,}")
    assert url_query(dash_duo)["range"] == ["30d"]
    click_option(dash_duo, "shell-theme", "dark")
    dash_duo.wait_for_class_to_equal("#app-root", "app theme-dark")
    assert url_query(dash_duo)["theme"] == ["dark"]

    dash_duo.driver.back()
    dash_duo.wait_for_class_to_equal("#app-root", "app theme-light")
    dash_duo.driver.back()
    dash_duo.wait_for_contains_text("#history-totals", f"{TOTAL_A:,}")
    until(lambda: checked(dash_duo, "history-range") == "7d",
          msg="the back button did not restore the 7-day range")
    assert dash_duo.get_logs() == []


def test_a_first_visit_comes_in_the_layout_and_plotly_with_the_page(app, seeded, dash_duo):
    """The page is drawn once, as its index is served, and comes in the app's first
    layout (no router request after it); its chart is drawn by the plotly.js bundle the
    page loads (not the full one, fetched when a chart first shows); a reload and the
    back button still move between its views."""
    drawn = layout_draws("dashboard.pages.history.page")
    open_page(dash_duo, app, "/history?site=s&tz=Asia/Tokyo&range=7d")
    dash_duo.wait_for_contains_text("#history-totals", f"{11 * sum(range(1, 7)):,}")
    until(lambda: dash_duo.find_elements("#history-graph .js-plotly-plot .trace"))
    assert drawn == ["/history"]
    loaded = dash_duo.driver.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)")
    assert [u for u in loaded if "plotly" in u] == [
        u for u in loaded if "/assets/vendor/plotly-basic.min.js" in u] != []
    click_option(dash_duo, "history-range", "30d")
    dash_duo.wait_for_contains_text("#history-totals", f"{11 * sum(range(1, 30)):,}")
    dash_duo.driver.refresh()
    dash_duo.wait_for_contains_text("#history-totals", f"{11 * sum(range(1, 30)):,}")
    dash_duo.driver.back()
    dash_duo.wait_for_contains_text("#history-totals", f"{11 * sum(range(1, 7)):,}")
    assert url_query(dash_duo)["range"] == ["7d"] and checked(dash_duo, "history-range") == "7d"
    assert dash_duo.get_logs() == []


def test_click_a_day_for_its_hours_then_download_the_csv(app, seeded, dash_duo):
    day = seeded - dt.timedelta(days=30)
    open_page(dash_duo, app, "/history?site=s&tz=Asia/Tokyo&range=90d")
    dash_duo.wait_for_contains_text("#history-period", "per day")
    dash_duo.wait_for_contains_text("#history-totals", f"{11 * sum(range(1, 41)):,}")
    point_at(dash_duo, "#history-graph", day.isoformat())
    ActionChains(dash_duo.driver).click().perform()
    dash_duo.wait_for_contains_text("#history-period", "per hour")
    query = url_query(dash_duo)
    assert (query["range"], query["gran"], query["start"]) == (["custom"], ["hour"],
                                                               [day.isoformat()])
    dash_duo.wait_for_contains_text("#history-totals", f"{11 * 30:,}")

    dash_duo.find_element("#history-csv-button").click()
    download = Path(dash_duo.download_path)
    (csv_file,) = until(lambda: list(download.glob("*.csv")),
                        msg="no CSV downloaded")
    csv = pd.read_csv(io.StringIO(csv_file.read_text()))
    assert list(csv.columns) == ["time", "Humans"]
    assert len(csv) == 24
    assert csv.loc[csv["time"] == f"{day.isoformat()}T12:00:00+09:00", "Humans"].item() == 330
    assert csv["Humans"].sum() == 330

    dash_duo.driver.back()
    dash_duo.wait_for_contains_text("#history-period", "per day")
    assert url_query(dash_duo)["range"] == ["90d"]
    assert dash_duo.get_logs() == []


def test_click_today_for_its_hours_so_far_not_the_hours_to_come(app, seeded, dash_duo):
    open_page(dash_duo, app, "/history?site=s&tz=Asia/Tokyo&range=7d&gran=day")
    dash_duo.wait_for_contains_text("#history-period", "per day")
    point_at(dash_duo, "#history-graph", seeded.isoformat())
    ActionChains(dash_duo.driver).click().perform()
    dash_duo.wait_for_contains_text("#history-period", "per hour")
    hours = dash_duo.driver.execute_script(
        "return document.querySelector('#history-graph .js-plotly-plot').data[0].x.length")
    assert hours == INSTANT.hour + 1              # 00:00 to the hour begun, none after it
    tomorrow = (seeded + dt.timedelta(days=1)).strftime("%d %b")
    assert tomorrow not in dash_duo.find_element("#history-period").text
    assert dash_duo.get_logs() == []


def test_back_to_history_through_the_nav_finds_the_view_as_it_was_left(app, seeded,
                                                                       dash_duo):
    open_page(dash_duo, app, "/history?site=s&tz=Asia/Tokyo&range=30d&compare=1")
    dash_duo.wait_for_contains_text("#history-totals", f"{11 * sum(range(1, 30)):,}")
    dash_duo.find_element("#nav-live").click()
    until(lambda: urlsplit(dash_duo.driver.current_url).path == "/")
    dash_duo.driver.refresh()                       # the tab remembers across a reload
    dash_duo.wait_for_element("#nav-history").click()
    dash_duo.wait_for_contains_text("#history-totals", f"{11 * sum(range(1, 30)):,}")
    query = url_query(dash_duo)
    assert (query["range"], query["compare"], query["tz"]) == (["30d"], ["1"], ["Asia/Tokyo"])
    assert checked(dash_duo, "history-range") == "30d"
    assert dash_duo.get_logs() == []


TICKS = """return Array.from(document.querySelectorAll('#history-graph .xtick text'), t => {
    const r = t.getBoundingClientRect();
    return [t.textContent, r.left, r.right, r.top, r.bottom];
});"""


@pytest.mark.parametrize(("end", "labels"), [
    ("2026-01-08", ["Jan 52026", "6", "7"]),
    ("2026-02-04", ["Jan 72026", "10", "13", "16", "19", "22", "25", "28", "31", "Feb 3"]),
])
def test_a_chart_by_day_is_labelled_by_date_the_last_day_too(app, dash_duo, end, labels):
    """Three days were ticked 00:00 / 12:00 with the last one unlabelled; a month is a
    date every three days, back from the last; on a phone no two labels overlap."""
    seed(get_services(app.server).db, "s",
         [(dt.datetime(2026, 1, day, 12, tzinfo=dt.UTC), "/a", day) for day in range(5, 32)])
    dash_duo.start_server(app, navigate=False)
    for width in (1280, 390):
        dash_duo.driver.set_window_size(width, 900)
        dash_duo.driver.get(dash_duo.server_url + "/history?site=s&tz=UTC&range=custom"
                            f"&start=2026-01-05&end={end}&gran=day")
        until(lambda: [t[0] for t in dash_duo.driver.execute_script(TICKS)] == labels)
        boxes = sorted(dash_duo.driver.execute_script(TICKS), key=lambda t: t[1])
        assert all(a[2] <= b[1] or a[4] <= b[3]
                   for a, b in zip(boxes, boxes[1:], strict=False)), width
    assert dash_duo.get_logs() == []


DRILL = "return window.dash_clientside.history.drill(arguments[0], arguments[1]);"
DAYS = {"granularity": "day",
        "href": "/history?site=s&tz=UTC&end=END&gran=hour&range=custom&start=START"}
HOURS = {"granularity": "hour",
         "href": "/history?site=s&tz=UTC&end=END&gran=minute&range=custom&start=START"}


@pytest.mark.parametrize(("point", "target", "search"), [
    ({"x": "2026-11-20"}, DAYS,
     "?site=s&tz=UTC&end=2026-11-21&gran=hour&range=custom&start=2026-11-20"),
    ({"x": "2026-11-30"}, DAYS,
     "?site=s&tz=UTC&end=2026-12-01&gran=hour&range=custom&start=2026-11-30"),
    ({"x": "2026-11-20 13:00"}, HOURS,
     "?site=s&tz=UTC&end=2026-11-20T14:00&gran=minute&range=custom&start=2026-11-20T13:00"),
    ({"x": "2026-12-31 23:00"}, HOURS,
     "?site=s&tz=UTC&end=2027-01-01T00:00&gran=minute&range=custom&start=2026-12-31T23:00"),
    # The repeated hour of a DST day: its label carries its offset, and so does the URL.
    ({"x": "2026-11-01 02:00", "customdata": ["2026-11-01T01:00-05:00", "01:00 EST"]},
     HOURS, "?site=s&tz=UTC&end=2026-11-01T02:00-05:00&gran=minute&range=custom"
            "&start=2026-11-01T01:00-05:00"),
    ({"x": "2026-11-01 02:00", "customdata": ["2026-11-01T01:30+05:30", "x"]}, HOURS,
     "?site=s&tz=UTC&end=2026-11-01T02:00%2B05:30&gran=minute&range=custom"
     "&start=2026-11-01T01:00%2B05:30"),
    ({"x": "soon"}, DAYS, None),
    ({"x": "2026-11-20 13:05"}, None, None),      # a minute: nothing finer
])
def test_a_click_on_the_chart_opens_the_bucket_under_it(app, dash_duo, point, target,
                                                        search):
    """The browser fills the clicked bucket's bounds into the URL the server gave
    (``drill_target``), as ``dashboard.ranges.drill_down`` would: no request of its own."""
    dash_duo.start_server(app, path="/history")
    until(lambda: dash_duo.driver.execute_script(
        "return Boolean(window.dash_clientside && window.dash_clientside.history)"))
    found = dash_duo.driver.execute_script(DRILL, {"points": [point]}, target)
    none = dash_duo.driver.execute_script("return window.dash_clientside.no_update")
    assert found == (none if search is None else search)
    assert dash_duo.get_logs() == []
