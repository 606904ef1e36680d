"""Controls in Chromium: readable focus on segmented controls (light and dark), no cloud
action in any chart's toolbar, the legend and the plot clear of the toolbar, the nav on a
phone, "Select all" over the page limit."""

import datetime as dt
from urllib.parse import parse_qs, urlsplit

import pytest
from browserkit import until
from dashkit import seed
from selenium.webdriver.common.keys import Keys

from dashboard.services import get_services

pytestmark = pytest.mark.usefixtures("frozen_clock")   # the same days at any hour

STYLE = """const el = arguments[0]; const s = getComputedStyle(el);
return [s.color, s.backgroundColor, s.outlineStyle, s.outlineWidth, s.boxShadow];"""


def open_page(dash_duo, app, path):
    dash_duo.start_server(app, path=path)


def rgb(text):
    parts = text[text.index("(") + 1:text.index(")")].split(",")  # "rgb(1, 2, 3)" or "(1, 2, 3)"
    return [float(p) for p in parts[:3]]


def contrast(a, b):
    def luminance(color):
        channels = [c / 255 for c in color]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.fixture
def seeded(app):
    seed(get_services(app.server).db, "shop",
         [(dt.datetime.now(dt.UTC) - dt.timedelta(minutes=m), f"/p{m:02d}", m)
          for m in range(1, 16)])


def test_a_focused_segment_stays_readable_with_a_visible_ring(app, seeded, dash_duo):
    dash_duo.start_server(app, navigate=False)
    for theme in ("light", "dark"):
        focus_the_next_preset(dash_duo, theme)


def focus_the_next_preset(dash_duo, theme: str) -> None:
    """Open History in ``theme``, move to the next preset with the keyboard and check
    the focused segment's contrast and ring."""
    dash_duo.driver.get(dash_duo.server_url + f"/history?site=shop&tz=UTC&theme={theme}")
    dash_duo.wait_for_class_to_equal("#app-root", f"app theme-{theme}")
    dash_duo.wait_for_contains_text("#history-period", "per")
    selected = dash_duo.find_element("#history-range input:checked")
    selected.find_element("xpath", "ancestor::label").click()  # mouse: focus, no change
    selected.send_keys(Keys.ARROW_RIGHT)  # keyboard: the next preset, focused
    until(lambda: dash_duo.driver.execute_script(
        "return document.activeElement.value") == "30d")
    label = dash_duo.find_element("#history-range input:checked").find_element(
        "xpath", "ancestor::label")
    until(lambda: "range=30d" in dash_duo.driver.current_url)
    color, background, outline, width, shadow = dash_duo.driver.execute_script(STYLE, label)
    assert contrast(rgb(color), rgb(background)) >= 4.5, (color, background)
    rings = [rgb(part) for part in shadow.split("rgb")[1:]] if shadow != "none" else []
    assert any(contrast(ring, rgb(background)) >= 3 for ring in rings), shadow
    assert dash_duo.get_logs() == []


MODEBAR = """return Array.from(document.querySelectorAll(arguments[0] + ' .modebar-btn'))
    .map(b => b.getAttribute('data-title'));"""


@pytest.mark.parametrize(("path", "graphs"), [
    ("/?site=shop&tz=UTC", ["#live-graph"]),
    ("/history?site=shop&tz=UTC", ["#history-graph"]),
    ("/rollups?site=shop&tz=UTC", [".js-plotly-plot"]),
])
def test_no_chart_offers_a_cloud_action_and_png_download_stays(app, seeded, dash_duo, path,
                                                                 graphs):
    open_page(dash_duo, app, path)
    for graph in graphs:
        until(lambda g=graph: dash_duo.driver.execute_script(MODEBAR, g))
        titles = dash_duo.driver.execute_script(MODEBAR, graph)
        assert "Download plot as a PNG" in titles
        assert not [t for t in titles if "cloud" in t.lower() or "studio" in t.lower()
                    or "share" in t.lower()], titles
    assert dash_duo.get_logs() == []


OVERLAP = """const root = document.querySelector(arguments[0]);
if (!root) { return null; }
const legend = root.querySelector('.legend'), bar = root.querySelector('.modebar');
if (!legend || !bar) { return null; }
const a = legend.getBoundingClientRect(), b = bar.getBoundingClientRect();
return [a.right > b.left && b.right > a.left && a.bottom > b.top && b.bottom > a.top,
        a.width, b.width];"""


def test_the_legend_never_sits_under_the_toolbar(app, seeded, dash_duo):
    pages = "&".join(f"page=/p{m:02d}" for m in range(1, 8))
    dash_duo.start_server(app, navigate=False)
    for width in (1280, 390):
        dash_duo.driver.set_window_size(width, 900)
        dash_duo.driver.get(dash_duo.server_url + f"/?site=shop&tz=UTC&{pages}")
        until(lambda: dash_duo.driver.execute_script(OVERLAP, "#live-graph"))
        overlaps, legend_width, bar_width = dash_duo.driver.execute_script(OVERLAP,
                                                                           "#live-graph")
        assert legend_width > 0 and bar_width > 0
        assert not overlaps, width
    assert dash_duo.get_logs() == []


CLEAR = """const root = document.querySelector(arguments[0]);
const bar = root && root.querySelector('.modebar');
const plot = root && root.querySelector('.nsewdrag');
if (!bar || !plot) { return null; }
const a = bar.getBoundingClientRect(), b = plot.getBoundingClientRect();
return [a.bottom <= b.top || a.top >= b.bottom || a.right <= b.left || a.left >= b.right,
        a.width, b.width];"""


@pytest.mark.parametrize(("path", "graph"), [
    ("/?site=shop&tz=UTC", "#live-graph"),
    ("/history?site=shop&tz=UTC&range=7d&gran=day", "#history-graph"),
    ("/rollups?site=shop&tz=UTC", "#rollups-graph"),
])
def test_the_toolbar_never_covers_the_plot(app, seeded, dash_duo, path, graph):
    """Plotly's toolbar sits in a band above the plot area, at any width (at 390 px it
    covered the Rollups bars)."""
    dash_duo.start_server(app, navigate=False)
    for width in (1280, 390):
        dash_duo.driver.set_window_size(width, 900)
        dash_duo.driver.get(dash_duo.server_url + path)
        until(lambda: dash_duo.driver.execute_script(CLEAR, graph))
        clear, bar_width, plot_width = dash_duo.driver.execute_script(CLEAR, graph)
        assert bar_width > 0 and plot_width > 0
        assert clear, width
    assert dash_duo.get_logs() == []


def phone(dash_duo):
    dash_duo.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})


def test_on_a_phone_the_nav_and_controls_take_little_of_the_screen(app, seeded, dash_duo):
    dash_duo.start_server(app, navigate=False)
    phone(dash_duo)
    dash_duo.driver.get(dash_duo.server_url + "/?site=shop&tz=UTC")
    dash_duo.wait_for_contains_text("#live-kpis", "1")
    until(lambda: dash_duo.find_elements("#shell-nav a"))
    height, width = dash_duo.driver.execute_script(
        "const r = document.querySelector('.topbar').getBoundingClientRect();"
        "return [r.height, document.documentElement.scrollWidth];")
    assert height <= 844 / 4, height
    assert width <= 390
    links = dash_duo.find_elements("#shell-nav a")
    assert {link.text for link in links} >= {"Live", "History", "Data"}
    dash_duo.find_element("#nav-history").click()  # reachable, scrolled in if needed
    dash_duo.wait_for_contains_text("#history-period", "per")
    assert dash_duo.get_logs() == []


def test_select_all_keeps_the_ten_most_visited_pages_and_says_so(app, seeded, dash_duo):
    open_page(dash_duo, app, "/history?site=shop&tz=UTC")
    dash_duo.wait_for_contains_text("#history-period", "per")
    dash_duo.find_element("#shell-pages").click()
    select_all = dash_duo.find_element(".dash-dropdown-action-button")
    assert select_all.text == "Select All"
    select_all.click()
    dash_duo.wait_for_contains_text("#shell-note", "showing the 10 with the most hits")
    until(lambda: dash_duo.driver.current_url.count("page=") == 10)
    kept = parse_qs(urlsplit(dash_duo.driver.current_url).query)["page"]
    assert sorted(kept) == [f"/p{m:02d}" for m in range(6, 16)]  # m hits on /pm
    assert "15 pages chosen" in dash_duo.find_element("#shell-note").text
    assert dash_duo.get_logs() == []


def test_the_time_zone_is_found_by_typing_and_kept_after_a_reload_and_back(app, seeded,
                                                                            dash_duo):
    """The time-zone control lists the zone shown, UTC and the browser's until one types:
    then every zone naming the text; the zone picked goes into the URL, a reload keeps
    it, and back returns to the one before."""
    open_page(dash_duo, app, "/history?site=shop&tz=Asia/Tokyo")
    dash_duo.wait_for_contains_text("#history-period", "Asia/Tokyo")
    dash_duo.find_element("#shell-tz").click()
    search = dash_duo.find_element(".dash-dropdown-search")
    listed = [o.text for o in dash_duo.find_elements(".dash-dropdown-option")]
    assert listed[:2] == ["Asia/Tokyo", "UTC"] and "Asia/Kolkata" not in listed
    assert listed[-1].startswith("Type to search") and len(listed) <= 4
    search.send_keys("kolk")
    until(lambda: "Asia/Kolkata" in [o.text for o in
                                     dash_duo.find_elements(".dash-dropdown-option")])
    search.send_keys(Keys.ENTER)
    until(lambda: "tz=Asia%2FKolkata" in dash_duo.driver.current_url
          or "tz=Asia/Kolkata" in dash_duo.driver.current_url)
    dash_duo.wait_for_contains_text("#history-period", "Asia/Kolkata")
    dash_duo.driver.refresh()
    dash_duo.wait_for_contains_text("#history-period", "Asia/Kolkata")
    dash_duo.wait_for_text_to_equal("#shell-tz", "Asia/Kolkata")
    dash_duo.driver.back()
    dash_duo.wait_for_contains_text("#history-period", "Asia/Tokyo")
    dash_duo.wait_for_text_to_equal("#shell-tz", "Asia/Tokyo")
    assert dash_duo.get_logs() == []
