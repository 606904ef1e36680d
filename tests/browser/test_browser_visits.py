"""History's visit figures in Chromium: the summary row's visits, pageviews, views per
visit, bounce rate and visit duration, the Entry and Exit pages panels, a click on an
entry page (the view shows that page, the visit cards say they are the whole site's),
and the same after a reload and the back button."""

import datetime as dt
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from browserkit import until
from clockkit import TEST_NOW

from dashboard.services import get_services
from queries.events.writer import EventWriter
from queries.rollups.build import run_rollups

pytestmark = pytest.mark.usefixtures("frozen_clock")   # the same days at any hour

DAY = (TEST_NOW - dt.timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
AGENT = "Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0"
# (visitor, hour, minute, page): four visits, two of them bounces; a gap of exactly
# 30 minutes continues the third.
VIEWS = [(1, 10, 0, "/landing"), (1, 10, 5, "/pricing"), (1, 10, 12, "/signup"),
         (2, 11, 0, "/landing"), (3, 12, 0, "/blog"), (3, 12, 30, "/pricing"),
         (4, 13, 0, "/blog")]
VIEW = (f"/history?site=s&tz=UTC&range=custom&start={DAY:%Y-%m-%d}"
        f"&end={DAY + dt.timedelta(days=1):%Y-%m-%d}")


@pytest.fixture
def seeded(app):
    db = get_services(app.server).db
    writer = EventWriter(db)
    for visitor, hour, minute, page in VIEWS:
        writer.add({"time": DAY + dt.timedelta(hours=hour, minutes=minute), "site": "s",
                    "host": f"203.0.113.{visitor}", "method": "GET", "path": page,
                    "query": "", "status": 200, "bytes": 1, "referrer": "-",
                    "user_agent": AGENT})
        get_services(app.server).recorder.record("s", page, DAY + dt.timedelta(
            hours=hour, minutes=minute))
    writer.close()
    get_services(app.server).recorder.flush()
    run_rollups(db, now=TEST_NOW)


def _panel(dash_duo, kind) -> dict[str, str]:
    rows = dash_duo.find_elements(f"#history-panel-{kind} tbody tr")
    return {row.find_elements("css selector", "td")[0].text:
            " | ".join(td.text for td in row.find_elements("css selector", "td")[1:])
            for row in rows}


def _kpis_read(dash_duo):
    dash_duo.wait_for_text_to_equal("#history-kpi-visits", "4")
    dash_duo.wait_for_text_to_equal("#history-kpi-pageviews", "7")
    dash_duo.wait_for_text_to_equal("#history-kpi-pervisit", "1.75")
    dash_duo.wait_for_text_to_equal("#history-kpi-bounce", "50 %")
    dash_duo.wait_for_text_to_equal("#history-kpi-duration", "10 min 30 s")


def test_the_summary_row_and_the_entry_and_exit_panels_show_the_visits(app, seeded,
                                                                       dash_duo):
    dash_duo.start_server(app, path=VIEW)
    _kpis_read(dash_duo)
    until(lambda: _panel(dash_duo, "entry") == {
        "/blog": "2 | 50 % | 15 min 00 s", "/landing": "2 | 50 % | 6 min 00 s"})
    assert _panel(dash_duo, "exit") == {
        "/pricing": "1 | 0 % | 30 min 00 s", "/blog": "1 | 100 % | 0 s",
        "/landing": "1 | 100 % | 0 s", "/signup": "1 | 0 % | 12 min 00 s"}

    dash_duo.find_element("#history-panel-entry a[title='/landing']").click()
    until(lambda: parse_qs(urlsplit(dash_duo.driver.current_url).query).get("page")
          == ["/landing"])
    dash_duo.wait_for_contains_text("#history-kpis", "(whole site)")
    _kpis_read(dash_duo)

    dash_duo.driver.refresh()
    dash_duo.wait_for_contains_text("#history-kpis", "(whole site)")
    _kpis_read(dash_duo)

    dash_duo.driver.back()
    until(lambda: "page" not in parse_qs(urlsplit(dash_duo.driver.current_url).query))
    until(lambda: "(whole site)" not in dash_duo.find_element("#history-kpis").text)
    _kpis_read(dash_duo)
    assert dash_duo.get_logs() == []


Y_TITLE = ("return document.querySelector('#history-graph .js-plotly-plot')"
           ".layout.yaxis.title.text")
Y_SUM = ("return Array.from(document.querySelector('#history-graph .js-plotly-plot')"
         "._fullData[0].y).reduce((a, b) => a + (b || 0), 0)")


def _script(dash_duo, script):
    return dash_duo.driver.execute_script(script)


def test_the_chart_draws_a_visit_metric_picked_and_the_url_keeps_it(app, seeded, dash_duo):
    dash_duo.start_server(app, path=VIEW + "&gran=hour&metric=visits")
    until(lambda: _script(dash_duo, Y_TITLE) == "visits per hour")
    until(lambda: _script(dash_duo, Y_SUM) == 4)
    dash_duo.wait_for_contains_text("#history-totals-table", "Visits")

    dash_duo.select_dcc_dropdown("#history-metric", value="Bounce rate")
    until(lambda: parse_qs(urlsplit(dash_duo.driver.current_url).query).get("metric")
          == ["bounce_rate"])
    until(lambda: _script(dash_duo, Y_TITLE) == "bounce rate (%) per hour")
    # one visit an hour, at 10, 11, 12 and 13: 0, 100, 0 and 100 %
    until(lambda: _script(dash_duo, Y_SUM) == 200)
    dash_duo.wait_for_contains_text("#history-totals-table", "50 %")

    dash_duo.driver.refresh()
    until(lambda: _script(dash_duo, Y_TITLE) == "bounce rate (%) per hour")
    dash_duo.driver.back()
    until(lambda: _script(dash_duo, Y_TITLE) == "visits per hour")
    assert dash_duo.get_logs() == []


LONG = "/missions/mission-control-handbook-chapter-eleven.html"
# A visit of 21 min 59 s entering on a long path.
LONG_VISIT = [(5, 10, 0, LONG), (5, 10, 21, "/missions/crew.html")]
# The elements of a selector whose text takes more than one line (or, ``arguments[1]``,
# is cut at their edge).
BROKEN = """return Array.from(document.querySelectorAll(arguments[0]), e => {
    const lines = new Set();
    const walker = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
    for (let text = walker.nextNode(); text; text = walker.nextNode()) {
        const range = document.createRange();
        range.selectNodeContents(text);
        Array.from(range.getClientRects()).filter(r => r.width > 0)
            .forEach(r => lines.add(Math.round(r.bottom)));
    }
    const cut = arguments[1] && e.scrollWidth > e.clientWidth + 1;
    return lines.size > 1 || cut ? e.textContent : null;
}).filter(Boolean);"""


@pytest.mark.parametrize("width", [1280, 390])
def test_units_stay_with_their_numbers_and_paths_are_cut_not_broken(app, dash_duo, width):
    """"21 min 59 / s" wrapped its unit alone onto a line, and an entry page read
    "/missions/miss/ions.html" across three: numbers keep one line, paths are cut with
    "…" and keep their whole name in a title, as the Pages panel does."""
    db = get_services(app.server).db
    writer = EventWriter(db)
    for visitor, hour, minute, page in LONG_VISIT:
        when = DAY + dt.timedelta(hours=hour, minutes=minute, seconds=59 * (minute > 0))
        writer.add({"time": when, "site": "s", "host": f"203.0.113.{visitor}",
                    "method": "GET", "path": page, "query": "", "status": 200, "bytes": 1,
                    "referrer": "-", "user_agent": AGENT})
        get_services(app.server).recorder.record("s", page, when)
    writer.close()
    get_services(app.server).recorder.flush()
    run_rollups(db, now=TEST_NOW)
    dash_duo.driver.set_window_size(width, 900)
    dash_duo.start_server(app, path=VIEW + "&compare=1")
    dash_duo.wait_for_text_to_equal("#history-kpi-duration", "21 min 59 s")
    until(lambda: "21 min 59 s" in dash_duo.find_element("#history-panel-entry").text)
    numbers = ("#history-kpis .kpi-value, #history-kpis .change, .bd-table td.num, "
               "#history-totals td.num")
    assert _script_args(dash_duo, BROKEN, numbers, True) == []
    assert _script_args(dash_duo, BROKEN, ".bd-value a, .bd-value > span") == []
    entry = dash_duo.find_element(f"#history-panel-entry a[title='{LONG}']")
    cut = _script_args(dash_duo, "const td = arguments[0].closest('td');"
                       "return [td.scrollWidth > td.clientWidth, "
                       "getComputedStyle(td).textOverflow];", entry)
    assert cut == [True, "ellipsis"]

    dash_duo.driver.get(f"{dash_duo.server_url}{VIEW}&page={quote(LONG)}")   # the totals
    until(lambda: dash_duo.find_element(f"#history-totals td[title='{LONG}']"))
    assert _script_args(dash_duo, BROKEN, "#history-totals td") == []
    assert dash_duo.get_logs() == []


def _script_args(dash_duo, script, *args):
    return dash_duo.driver.execute_script(script, *args)
