"""The historical page in Chromium: sub-day ranges and hour → minutes drill-down survive
load, reload, back/forward and control changes; picked dates, the preset highlight, the
chart and the URL agree; the CSV is what is plotted however old the view; an unknown
site is named."""

import datetime as dt
import io
import sys
import threading
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pandas as pd
import pytest
import time_machine
from browserkit import WAIT_S, until
from clockkit import TEST_NOW
from dashkit import dashboard_app, seed
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from dashboard.pages.history import controls as controls_module
from dashboard.pages.history.view import compute_view
from dashboard.services import get_services

POINTS = """const plot = document.querySelector('#history-graph .js-plotly-plot');
return plot && plot._fullData && plot._fullData.length
    ? [plot._fullData.length, plot._fullData[0].x.length,
       Array.from(plot._fullData[0].y).reduce((a, b) => a + b, 0)] : null;"""
DAY = (TEST_NOW - dt.timedelta(days=2)).date()
pytestmark = pytest.mark.usefixtures("frozen_clock")   # DAY is two days before it


def at(hour, minute=0):
    return dt.datetime.combine(DAY, dt.time(hour, minute), dt.UTC)


@pytest.fixture
def seeded(app):
    """On DAY (UTC): 1 hit at 09:59, 3 at 10:05, 2 at 10:40 and 7 at 12:00."""
    seed(get_services(app.server).db, "s", [(at(9, 59), "/a", 1), (at(10, 5), "/a", 3),
                                            (at(10, 40), "/b", 2), (at(12), "/a", 7)])


def open_page(dash_duo, app, path):
    dash_duo.start_server(app, path=path)


def query(dash_duo):
    return {k: v[0] for k, v in parse_qs(urlsplit(dash_duo.driver.current_url).query).items()}


def plotted(dash_duo):
    return dash_duo.driver.execute_script(POINTS)


def wait_plotted(dash_duo, traces, points, total):
    until(lambda: plotted(dash_duo) == [traces, points, total])


def checked(dash_duo, group):
    return dash_duo.driver.execute_script(
        f"return document.querySelector('#{group} input:checked').value")


def click_option(dash_duo, group, value):
    dash_duo.find_element(f"#{group} input[value='{value}']").find_element(
        "xpath", "ancestor::label").click()


def assert_the_hour(dash_duo):
    q = query(dash_duo)
    assert (q["range"], q["start"], q["end"], q["gran"]) == (
        "custom", f"{DAY}T10:00", f"{DAY}T11:00", "minute")


def test_an_hours_minutes_survive_load_reload_controls_and_history(app, seeded, dash_duo):
    hour = f"/history?site=s&tz=UTC&range=custom&start={DAY}T10:00&end={DAY}T11:00&gran=minute"
    open_page(dash_duo, app, hour)
    wait_plotted(dash_duo, 1, 60, 5)
    dash_duo.wait_for_contains_text("#history-period", "10:00 →")
    click_option(dash_duo, "history-mode", "stacked")
    until(lambda: query(dash_duo).get("mode") == "stacked")
    dash_duo.find_element("#history-compare input").click()
    until(lambda: query(dash_duo).get("compare") == "1")
    wait_plotted(dash_duo, 2, 60, 5)  # stacked + the previous hour's total
    assert_the_hour(dash_duo)
    legend = dash_duo.driver.execute_script(
        "return document.querySelector('#history-graph .legend').textContent;")
    assert "Previous period" in legend and "All pages" in legend

    dash_duo.driver.refresh()
    wait_plotted(dash_duo, 2, 60, 5)
    assert_the_hour(dash_duo)
    dash_duo.driver.back()
    until(lambda: "compare" not in query(dash_duo))
    wait_plotted(dash_duo, 1, 60, 5)
    assert_the_hour(dash_duo)
    dash_duo.driver.forward()
    until(lambda: query(dash_duo).get("compare") == "1")
    wait_plotted(dash_duo, 2, 60, 5)
    assert_the_hour(dash_duo)
    assert checked(dash_duo, "history-range") == "custom"
    assert dash_duo.get_logs() == []


def test_clicking_an_hour_shows_exactly_its_60_minutes(app, seeded, dash_duo):
    open_page(dash_duo, app, f"/history?site=s&tz=UTC&range=custom&start={DAY}"
                             f"&end={DAY + dt.timedelta(days=1)}&gran=hour")
    wait_plotted(dash_duo, 1, 24, 13)
    graph = dash_duo.find_element("#history-graph .nsewdrag")
    dash_duo.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", graph)
    offset = dash_duo.driver.execute_script(
        """const plot = document.querySelector('#history-graph .js-plotly-plot');
        const xa = plot._fullLayout.xaxis;
        return xa.l2p(xa.d2l(arguments[0])) - xa._length / 2;""", f"{DAY} 10:00")
    ActionChains(dash_duo.driver).move_to_element(graph).move_by_offset(round(offset), 0) \
        .click().perform()
    dash_duo.wait_for_contains_text("#history-period", "per minute")
    wait_plotted(dash_duo, 1, 60, 5)
    assert_the_hour(dash_duo)
    click_option(dash_duo, "history-granularity", "auto")  # another control: same hour
    until(lambda: "gran" not in query(dash_duo))
    wait_plotted(dash_duo, 1, 60, 5)
    assert query(dash_duo)["start"] == f"{DAY}T10:00"
    dash_duo.driver.back()
    wait_plotted(dash_duo, 1, 60, 5)
    dash_duo.driver.back()
    dash_duo.wait_for_contains_text("#history-period", "per hour")
    wait_plotted(dash_duo, 1, 24, 13)
    dash_duo.driver.forward()
    wait_plotted(dash_duo, 1, 60, 5)
    assert_the_hour(dash_duo)
    assert dash_duo.get_logs() == []




# No callback of the page waiting, on its way or with its result still to be applied.
SETTLED = """const cbs = window.store.getState().callbacks;
return ['requested', 'prioritized', 'blocked', 'executing', 'watched', 'executed']
    .every(name => !cbs[name].length);"""
# Whether the controls' own callback (controls.choose: the one with the granularity as
# an input) is waiting, on its way or with its result still to be applied.
CHOOSING = """const cbs = window.store.getState().callbacks;
return ['requested', 'prioritized', 'blocked', 'executing', 'watched', 'executed']
    .some(name => cbs[name].some(cb => cb.callback.inputs.some(
        i => i.id === 'history-granularity')));"""


def test_controls_still_showing_the_view_left_leave_the_url_and_the_forward_history(
        app, seeded, dash_duo, monkeypatch):
    """The flake this pins down, in the renderer's order it needs: back pressed, and the
    controls, still in step with the view left, fire their callback before they are put
    in step with the URL moved to (``sync_controls``, held here until they have). They
    once applied the old view's granularity to the new one: a history entry that cut
    off the forward history. They write nothing until put in step."""
    held, controls_in = threading.Event(), controls_module.controls_in

    def sync_held(search):
        if sys._getframe(1).f_code.co_name == "sync_controls":
            assert held.wait(WAIT_S)
        return controls_in(search)

    monkeypatch.setattr(controls_module, "controls_in", sync_held)
    held.set()
    open_page(dash_duo, app, f"/history?site=s&tz=UTC&range=custom&start={DAY}T10:00"
                             f"&end={DAY}T11:00&gran=minute")
    wait_plotted(dash_duo, 1, 60, 5)
    click_option(dash_duo, "history-granularity", "hour")
    until(lambda: query(dash_duo).get("gran") == "hour")
    wait_plotted(dash_duo, 1, 1, 5)
    until(lambda: dash_duo.driver.execute_script(SETTLED))
    held.clear()
    dash_duo.driver.back()
    dash_duo.driver.execute_script(   # what the controls show, reported again
        "window.dash_clientside.set_props('history-granularity', {value: 'hour'});")
    until(lambda: not dash_duo.driver.execute_script(CHOOSING))
    held.set()
    wait_plotted(dash_duo, 1, 60, 5)
    until(lambda: dash_duo.driver.execute_script(SETTLED))
    assert_the_hour(dash_duo)
    assert checked(dash_duo, "history-granularity") == "minute"
    dash_duo.driver.forward()
    until(lambda: query(dash_duo).get("gran") == "hour")
    wait_plotted(dash_duo, 1, 1, 5)
    assert dash_duo.get_logs() == []

def type_date(dash_duo, selector, value):
    field = dash_duo.find_element(selector)
    field.click()
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys(value, Keys.ENTER)


def test_picked_dates_the_preset_the_chart_and_the_url_agree(app, seeded, dash_duo):
    first, last = DAY - dt.timedelta(days=3), DAY
    open_page(dash_duo, app, "/history?site=s&tz=UTC")
    dash_duo.wait_for_contains_text("#history-totals", "13")
    assert checked(dash_duo, "history-range") == "7d"
    type_date(dash_duo, ".dash-datepicker-start-date", first.isoformat())
    type_date(dash_duo, ".dash-datepicker-end-date", last.isoformat())
    until(lambda: query(dash_duo).get("end") == (last + dt.timedelta(days=1)).isoformat())
    assert (query(dash_duo)["range"], query(dash_duo)["start"]) == ("custom", first.isoformat())
    until(lambda: checked(dash_duo, "history-range") == "custom")
    dash_duo.wait_for_contains_text("#history-period", f"{first:%d %b %Y}")

    dash_duo.find_element("#history-compare input").click()
    until(lambda: query(dash_duo).get("compare") == "1")
    assert (query(dash_duo)["range"], query(dash_duo)["start"]) == ("custom", first.isoformat())
    dash_duo.wait_for_contains_text("#history-totals", "Previous period")
    assert checked(dash_duo, "history-range") == "custom"
    assert f"{first:%d %b %Y}" in dash_duo.find_element("#history-period").text
    assert dash_duo.find_element(".dash-datepicker-start-date").get_attribute("value") \
        == first.isoformat()

    dash_duo.driver.refresh()
    dash_duo.wait_for_contains_text("#history-period", f"{first:%d %b %Y}")
    assert checked(dash_duo, "history-range") == "custom"
    assert dash_duo.get_logs() == []


# A minute's first seconds: the test ends before the next (a new minute redraws the
# chart's incomplete last point).
AGED_AT = dt.datetime(2026, 3, 12, 14, 20, 2, tzinfo=dt.UTC)


@time_machine.travel(AGED_AT, tick=True)
def test_the_csv_is_what_is_plotted_after_the_view_aged(tmp_path, dash_duo):
    with dashboard_app(tmp_path / "store", cache_seconds=1) as app:
        services = get_services(app.server)
        seed(services.db, "s", [(AGED_AT - dt.timedelta(minutes=5), "/a", 4)])
        open_page(dash_duo, app, "/history?site=s&tz=UTC&range=today&gran=minute")
        until(lambda: (plotted(dash_duo) or [0, 0, 0])[2] == 4)
        drawn = plotted(dash_duo)
        services.recorder.record("s", "/a", n=6)  # arrives after the chart was drawn
        services.recorder.flush()
        search = "?site=s&tz=UTC&range=today&gran=minute"

        def moved_on():  # the view is older than the cache (1 s): a new read differs
            with app.server.app_context():
                return int(compute_view(search).current.sum().sum()) == 10

        until(moved_on)
        dash_duo.find_element("#history-csv-button").click()
        download = Path(dash_duo.download_path)
        until(lambda: list(download.glob("*.csv")))
        (csv_file,) = download.glob("*.csv")
        csv = pd.read_csv(io.StringIO(csv_file.read_text()))
        assert [1, len(csv), int(csv["Humans"].sum())] == drawn == plotted(dash_duo)
        shapes = dash_duo.driver.execute_script(
            "const p = document.querySelector('#history-graph .js-plotly-plot');"
            "return (p.layout.shapes || []).map(s => [s.name, s.x0]);")
        # Plotly writes a midnight as the date alone: compare instants.
        assert [(name, pd.Timestamp(x0)) for name, x0 in shapes] == [
            ("incomplete", pd.Timestamp(csv["time"].iloc[-1][:16]))]
        assert dash_duo.get_logs() == []


def test_an_unknown_site_says_it_has_no_data_and_lists_the_known_ones(app, seeded, dash_duo):
    open_page(dash_duo, app, "/history?site=nosuch&tz=UTC")
    dash_duo.wait_for_contains_text("#history-alert", "'nosuch' has no data")
    dash_duo.find_element("#unknown-site a").click()
    dash_duo.wait_for_contains_text("#history-totals", "13")
    assert query(dash_duo)["site"] == "s"
    assert dash_duo.get_logs() == []


@time_machine.travel(dt.datetime(2026, 11, 10, 12, tzinfo=dt.UTC), tick=True)  # after it
def test_a_dst_day_shows_both_one_oclock_hours_apart_with_local_labels(app, dash_duo):
    utc = dt.UTC
    seed(get_services(app.server).db, "ny", [
        (dt.datetime(2026, 11, 1, 5, 30, tzinfo=utc), "/", 4),   # 01:30 EDT
        (dt.datetime(2026, 11, 1, 6, 30, tzinfo=utc), "/", 9)])  # 01:30 EST
    open_page(dash_duo, app, "/history?site=ny&tz=America/New_York&range=custom"
                             "&start=2026-11-01&end=2026-11-02&gran=hour")
    wait_plotted(dash_duo, 1, 25, 13)  # a 25-hour day
    x, y = dash_duo.driver.execute_script(
        "const p = document.querySelector('#history-graph .js-plotly-plot');"
        "return [Array.from(p._fullData[0].x), Array.from(p._fullData[0].y)];")
    assert len(set(x)) == 25 and y[1:3] == [4, 9]
    graph = dash_duo.find_element("#history-graph .nsewdrag")
    dash_duo.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", graph)

    def hover_title(driver):
        dx, dy = driver.execute_script(
            """const plot = document.querySelector('#history-graph .js-plotly-plot');
            const xa = plot._fullLayout.xaxis, ya = plot._fullLayout.yaxis;
            return [xa.l2p(xa.d2l(arguments[0])) - xa._length / 2,
                    ya.l2p(arguments[1]) - ya._length / 2];""", x[2], y[2])
        ActionChains(driver).move_to_element(graph).move_by_offset(round(dx), round(dy)) \
            .perform()
        return driver.execute_script(
            "const t = document.querySelector('#history-graph .hoverlayer');"
            "return t ? t.textContent : '';")

    until(lambda: "01:00 EST" in hover_title(dash_duo.driver))
    ticks = dash_duo.driver.execute_script(
        "return Array.from(document.querySelectorAll('#history-graph .xtick text'))"
        ".map(t => t.textContent);")
    assert ticks[0].startswith("00:00 EDT") and any("EST" in t for t in ticks)
    assert dash_duo.get_logs() == []
