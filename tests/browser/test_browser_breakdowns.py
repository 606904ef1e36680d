"""History's breakdown panels in Chromium: a click on a referrer filters the chart, the
totals and the KPIs and the URL keeps it (reload, back button); the bot toggle changes the
totals by the bot share; every panel renders in light and dark and at 390 px; a bad
filter in the URL is a message."""

import datetime as dt
import os
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from browserkit import until
from dimkit import BOTS, CHROME, NEWS, TOTAL, ingest_sample

from dashboard.pages.history.breakdowns import PANELS
from dashboard.services import get_services
from queries.ingest.run import Ingestor, ingest_file

pytestmark = pytest.mark.usefixtures("frozen_clock")   # the same days at any hour

HUMANS = TOTAL - BOTS
TRACE_NAME = "return document.querySelector('#history-graph .js-plotly-plot').data[0].name"


@pytest.fixture
def seeded(app, tmp_path):
    ingest_sample(get_services(app.server).db, "s", tmp_path)


def open_page(dash_duo, app, path):
    dash_duo.start_server(app, path=path)


def url_query(dash_duo):
    return parse_qs(urlsplit(dash_duo.driver.current_url).query)


def trace_name(dash_duo):
    return dash_duo.driver.execute_script(TRACE_NAME)


PANEL_SUM = """const rows = document.querySelectorAll('#history-panel-' + arguments[0]
    + ' tbody tr td.num:nth-child(2)');
return rows.length ? Array.from(rows).reduce(
    (a, td) => a + Number(td.innerText.replace(/,/g, '')), 0) : null;"""


def panel_sum(dash_duo, dim):
    return dash_duo.driver.execute_script(PANEL_SUM, dim)


def kpi(dash_duo, name):
    return dash_duo.find_element(f"#history-kpi-{name}").text


def test_clicking_a_referrer_filters_the_view_and_the_url_keeps_it(app, seeded, dash_duo):
    open_page(dash_duo, app, "/history?site=s&tz=UTC&range=7d")
    dash_duo.wait_for_contains_text("#history-panel-referrer", "news.example")
    until(lambda: trace_name(dash_duo) == "Humans")
    dash_duo.wait_for_text_to_equal("#history-kpi-hits", f"{HUMANS:,}")

    dash_duo.find_element("#history-panel-referrer a[title='news.example']").click()
    until(lambda: url_query(dash_duo).get("filter") == ["referrer:news.example"])
    until(lambda: trace_name(dash_duo) == "referrer = news.example")
    dash_duo.wait_for_contains_text("#history-totals", f"{NEWS:,}")
    dash_duo.wait_for_text_to_equal("#history-kpi-hits", f"{NEWS:,}")
    dash_duo.wait_for_contains_text("#history-chip", "referrer = news.example")
    # The bot share and the 4xx/5xx rate are the filtered hits' too (the site's: 17%
    # bots, 6.8 % of errors); that rate and the other panels come from raw events, and
    # the page says so.
    dash_duo.wait_for_text_to_equal("#history-botshare",
                                    "0% bots among referrer = news.example (left out)")
    dash_duo.wait_for_text_to_equal("#history-kpi-errors", "0.0 %")
    dash_duo.wait_for_contains_text("#history-panel-notes", "raw events")
    dash_duo.wait_for_contains_text("#history-panel-notes", "4xx/5xx rate")
    assert "search.example" not in dash_duo.find_element("#history-panel-referrer").text
    assert "iOS" not in dash_duo.find_element("#history-panel-os").text

    dash_duo.driver.refresh()
    until(lambda: trace_name(dash_duo) == "referrer = news.example")
    dash_duo.wait_for_text_to_equal("#history-kpi-hits", f"{NEWS:,}")

    dash_duo.driver.back()
    until(lambda: "filter" not in url_query(dash_duo))
    until(lambda: trace_name(dash_duo) == "Humans")
    dash_duo.wait_for_text_to_equal("#history-kpi-hits", f"{HUMANS:,}")

    dash_duo.driver.forward()
    dash_duo.wait_for_contains_text("#history-chip", "news.example")
    dash_duo.find_element("#history-chip-remove").click()
    until(lambda: "filter" not in url_query(dash_duo))
    dash_duo.wait_for_text_to_equal("#history-kpi-hits", f"{HUMANS:,}")
    assert dash_duo.get_logs() == []


def test_the_bot_toggle_changes_the_totals_by_the_bot_share(app, seeded, dash_duo):
    open_page(dash_duo, app, "/history?site=s&tz=UTC&range=7d")
    share = round(100 * BOTS / TOTAL)
    dash_duo.wait_for_text_to_equal("#history-botshare", f"{share}% bots (left out)")
    dash_duo.wait_for_contains_text("#history-totals", f"{HUMANS:,}")
    # Every dimension panel counts humans: each one's rows add up to the human hits
    # (fewer than ten values each in the sample), and Googlebot is nowhere.
    panels = ("referrer", "status", "browser", "os", "device", "country", "utm_source")
    for dim in panels:
        until(lambda d=dim: panel_sum(dash_duo, d) == HUMANS)
    assert "Googlebot" not in dash_duo.find_element("#history-panel-browser").text

    dash_duo.find_element("#history-bots input").click()
    until(lambda: url_query(dash_duo).get("bots") == ["1"])
    dash_duo.wait_for_contains_text("#history-totals", f"{TOTAL:,}")
    dash_duo.wait_for_text_to_equal("#history-kpi-hits", f"{TOTAL:,}")
    dash_duo.wait_for_text_to_equal("#history-botshare", f"{share}% bots (included)")
    for dim in panels:
        until(lambda d=dim: panel_sum(dash_duo, d) == TOTAL)
    dash_duo.wait_for_contains_text("#history-panel-browser", "Googlebot")
    dash_duo.driver.refresh()                     # the URL keeps the toggle
    dash_duo.wait_for_text_to_equal("#history-botshare", f"{share}% bots (included)")
    until(lambda: panel_sum(dash_duo, "referrer") == TOTAL)
    until(lambda: dash_duo.find_element("#history-bots input").is_selected())
    dash_duo.find_element("#history-bots input").click()
    until(lambda: "bots" not in url_query(dash_duo))
    until(lambda: panel_sum(dash_duo, "referrer") == HUMANS)
    dash_duo.find_element("#history-bots input").click()
    until(lambda: panel_sum(dash_duo, "referrer") == TOTAL)
    # Assets: left out of the top pages until asked for.
    assert "/style.css" not in dash_duo.find_element("#history-panel-page").text
    dash_duo.find_element("#history-assets input").click()
    dash_duo.wait_for_contains_text("#history-panel-page", "/style.css")
    assert url_query(dash_duo).get("assets") == ["1"]
    assert dash_duo.get_logs() == []


LOOKS = [(theme, width) for theme in ("light", "dark") for width in (1280, 390)]


def test_every_panel_renders_in_each_theme_and_on_a_phone(app, seeded, dash_duo):
    dash_duo.start_server(app, navigate=False)
    for theme, width in LOOKS:
        dash_duo.driver.set_window_size(width, 1000)
        dash_duo.driver.get(dash_duo.server_url + f"/history?site=s&tz=UTC&theme={theme}")
        dash_duo.wait_for_class_to_equal("#app-root", f"app theme-{theme}")
        for dim in PANELS:
            until(lambda d=dim: dash_duo.find_elements(f"#history-panel-{d} tbody tr"))
        dash_duo.wait_for_contains_text("#history-notfound", "/missing")
        overflow = dash_duo.driver.execute_script(
            "return document.documentElement.scrollWidth - "
            "document.documentElement.clientWidth")
        assert overflow <= 0, (theme, width)
        for dim in PANELS:  # each panel fits its column: nothing clipped sideways
            panel = dash_duo.find_element(f"#history-panel-{dim}")
            table = dash_duo.find_element(f"#history-panel-{dim} table")
            assert table.size["width"] <= panel.size["width"], (dim, theme, width)
        screenshot(dash_duo, width, f"history-{theme}-{width}.png")
        assert dash_duo.get_logs() == []


def test_a_filtered_view_says_what_follows_the_filter(app, seeded, dash_duo):
    """(direct): 5 of its 23 human hits are 404s, 15 of its 38 hits are bots."""
    dash_duo.start_server(app, navigate=False)
    for theme, width in LOOKS:
        dash_duo.driver.set_window_size(width, 1000)
        dash_duo.driver.get(dash_duo.server_url + f"/history?site=s&tz=UTC&range=7d"
                            f"&theme={theme}&filter=referrer:(direct)")
        dash_duo.wait_for_class_to_equal("#app-root", f"app theme-{theme}")
        dash_duo.wait_for_text_to_equal("#history-botshare",
                                        "39% bots among referrer = (direct) (left out)")
        dash_duo.wait_for_text_to_equal("#history-kpi-errors", f"{100 * 5 / 23:.1f} %")
        dash_duo.wait_for_contains_text("#history-kpis", "humans, from raw events")
        dash_duo.wait_for_contains_text("#history-panel-notes", "4xx/5xx rate")
        overflow = dash_duo.driver.execute_script(
            "return document.documentElement.scrollWidth - "
            "document.documentElement.clientWidth")
        assert overflow <= 0, (theme, width)
        screenshot(dash_duo, width, f"history-filtered-{theme}-{width}.png")
        assert dash_duo.get_logs() == []


def screenshot(dash_duo, width: int, name: str) -> None:
    """The whole page into $HITBOARD_SCREENSHOTS, for a person to look at (not an
    assertion); nothing when it is unset."""
    shots = os.environ.get("HITBOARD_SCREENSHOTS")
    if shots:
        height = dash_duo.driver.execute_script("return document.body.scrollHeight")
        dash_duo.driver.set_window_size(width, height + 100)
        dash_duo.driver.save_screenshot(str(Path(shots) / name))


@pytest.mark.parametrize(("query", "said"), [
    ("filter=nope:x", "unknown dimension"),
    ("filter=referrer", "dimension:value"),
])
def test_a_bad_filter_is_a_message(app, seeded, dash_duo, query, said):
    open_page(dash_duo, app, f"/history?site=s&tz=UTC&{query}")
    dash_duo.wait_for_contains_text("#history-alert", said)
    assert dash_duo.get_logs() == []


def test_a_hostile_filter_value_is_text(app, seeded, dash_duo):
    value = "<img src=x onerror=alert(1)>$where.x"
    open_page(dash_duo, app, "/history?site=s&tz=UTC&filter=referrer:" + value.replace(
        "<", "%3C").replace(">", "%3E").replace("$", "%24"))
    dash_duo.wait_for_contains_text("#history-chip", value)
    dash_duo.wait_for_text_to_equal("#history-kpi-hits", "0")
    assert not dash_duo.find_elements("#history-chip img")
    assert dash_duo.get_logs() == []


NUM_INSIDE_ITEM = """const items = document.querySelectorAll('#history-notfound li');
return Array.from(items).map(li => {
    const item = li.getBoundingClientRect();
    const num = li.querySelector('.num').getBoundingClientRect();
    return num.top >= item.top - 1 && num.bottom <= item.bottom + 1;
});"""


def test_each_404_count_stays_beside_its_own_path(app, dash_duo, tmp_path):
    """Ten 404 paths of every length around a line's width: each count stays inside its
    own list item (a count pushed below a path that fills its line ran into the next
    item's count, "764768")."""
    when = dt.datetime.combine(dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1),
                               dt.time(12), dt.UTC)
    rows = [f'81.0.{n}.{i} - - [{when:%d/%b/%Y:%H:%M:%S +0000}] "GET /{"x" * (30 + n)}-page '
            f'HTTP/1.1" 404 100 "-" "{CHROME}"'
            for n in range(10) for i in range(1000 + n)]
    log = tmp_path / "notfound.log"
    log.write_text("\n".join(rows) + "\n")
    ingest_file(Ingestor(get_services(app.server).db, site="s"), log, "s", from_start=True)
    dash_duo.start_server(app, navigate=False)
    for width in (1280, 390):
        dash_duo.driver.set_window_size(width, 1000)
        dash_duo.driver.get(dash_duo.server_url + "/history?site=s&tz=UTC")
        until(lambda: len(dash_duo.find_elements("#history-notfound li")) == 10)
        assert dash_duo.driver.execute_script(NUM_INSIDE_ITEM) == [True] * 10, width
    assert dash_duo.get_logs() == []


# The page's own element: Dash pages' router, building the page again, replaces it.
MARK = "document.querySelector('.page-history').__kept = true;"
KEPT = "return document.querySelector('.page-history').__kept === true;"


def test_a_click_on_a_page_shows_its_kpis_and_panels_in_place(app, seeded, dash_duo):
    """A page is a filter like any other. "/about": 20 human hits,
    all from search.example on an iPhone. The page moves in place (its element is the
    same one), and the back button returns to the whole site."""
    open_page(dash_duo, app, "/history?site=s&tz=UTC&range=7d")
    dash_duo.wait_for_text_to_equal("#history-kpi-hits", f"{HUMANS:,}")
    dash_duo.driver.execute_script(MARK)
    dash_duo.find_element("#history-panel-page a[title='/about']").click()
    until(lambda: url_query(dash_duo).get("page") == ["/about"])
    dash_duo.wait_for_text_to_equal("#history-kpi-hits", "20")
    dash_duo.wait_for_text_to_equal("#history-kpi-visitors", "20")
    dash_duo.wait_for_contains_text("#history-chip", "page = /about")
    until(lambda: trace_name(dash_duo) == "/about")
    dash_duo.wait_for_contains_text("#history-panel-referrer", "search.example")
    assert "news.example" not in dash_duo.find_element("#history-panel-referrer").text
    dash_duo.wait_for_contains_text("#history-panel-device", "mobile")
    assert "(whole site)" not in dash_duo.find_element("#history-kpi-hits").find_element(
        "xpath", "..").text
    assert dash_duo.driver.execute_script(KEPT), "the page was built again"

    dash_duo.driver.back()
    until(lambda: "page" not in url_query(dash_duo))
    dash_duo.wait_for_text_to_equal("#history-kpi-hits", f"{HUMANS:,}")
    until(lambda: not dash_duo.find_elements("#history-chip"))
    until(lambda: trace_name(dash_duo) == "Humans")
    assert dash_duo.driver.execute_script(KEPT), "the back button built the page again"
    dash_duo.driver.forward()
    dash_duo.wait_for_text_to_equal("#history-kpi-hits", "20")
    dash_duo.find_element("#history-chip-remove").click()
    until(lambda: "page" not in url_query(dash_duo))
    dash_duo.wait_for_text_to_equal("#history-kpi-hits", f"{HUMANS:,}")
    assert dash_duo.get_logs() == []


def test_under_a_referrer_the_panels_of_visits_say_whose_they_are(app, seeded, dash_duo):
    """Under a referrer the entry and exit pages were the whole
    site's, silently. Each panel of hits counts the referrer's; those of visits say
    they show all of the site's visits, and so do the visits' KPIs."""
    open_page(dash_duo, app, "/history?site=s&tz=UTC&range=7d&filter=referrer:news.example")
    said = "All of the site's visits: referrer = news.example does not apply to visits."
    for panel in ("entry", "exit", "goals"):
        dash_duo.wait_for_contains_text(f"#history-panel-{panel}", said)
    for dim in ("referrer", "browser", "page", "status", "device"):
        until(lambda d=dim: panel_sum(dash_duo, d) == NEWS)
    dash_duo.wait_for_text_to_equal("#history-kpi-hits", f"{NEWS:,}")
    assert "(whole site)" in dash_duo.find_element("#history-kpi-visits").find_element(
        "xpath", "..").text
    dash_duo.wait_for_contains_text("#history-panel-notes", "all of the site's visits")
    dash_duo.find_element("#history-chip-remove").click()
    until(lambda: "filter" not in url_query(dash_duo))
    until(lambda: said not in dash_duo.find_element("#history-panel-entry").text)
    assert dash_duo.get_logs() == []
