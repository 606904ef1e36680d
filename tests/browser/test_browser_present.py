"""Presenter mode in Chromium: it renders without the shell's selectors or chart
toolbars, in big type; its keys work (and the analyst keys on History); the playlist
switches views; a reload stays in presenter mode; s/g drive the load generator only
signed in, and say so where they cover nothing; note labels stay legible; the top list
is Live's."""

import datetime as dt
import time

import pytest
import time_machine
from browserkit import WAIT_S, until
from dashkit import page_module, seed, sign_in
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from dashboard.loadgen.control import get_generator
from dashboard.services import get_services

pytestmark = pytest.mark.usefixtures("frozen_clock")   # the same days at any hour
POINTS = """
const p = document.querySelector('#present-graph .js-plotly-plot');
return p && p.data ? p.data[0].x.length : 0;
"""
SHOWN = ("const e = document.querySelector(arguments[0]);"
         " return !!(e && e.getClientRects().length);")


def _seed(app, site="shop"):
    now = dt.datetime.now(dt.UTC)
    seed(get_services(app.server).db, site,
         [(now - dt.timedelta(minutes=m), f"/p{m % 3}", m % 5 + 1) for m in range(0, 40)])


def _open(dash_duo, app, path):
    dash_duo.start_server(app, path=path)
    dash_duo.wait_for_element("#present-root")


def _press(dash_duo, *keys):
    for key in keys:
        ActionChains(dash_duo.driver).send_keys(key).perform()


def _script(dash_duo, script, *args):
    return dash_duo.driver.execute_script(script, *args)


def _text(dash_duo, selector: str) -> str:
    """An element's visible text, read in the page: never a stale reference while the
    interval re-renders it (a busy machine's race)."""
    return _script(dash_duo, "const e = document.querySelector(arguments[0]); "
                   "return e ? e.innerText : '';", selector)


def _toast(dash_duo) -> str:
    """The admin panel's message (its text even while the panel is hidden)."""
    return _script(dash_duo, "return document.getElementById('present-toast').textContent;")


def _search(dash_duo) -> str:
    return _script(dash_duo, "return window.location.search;")


def test_present_renders_big_without_selectors_or_toolbars(app, dash_duo):
    _seed(app)
    dash_duo.driver.set_window_size(1920, 1080)
    _open(dash_duo, app, "/?present=1&site=shop&tz=UTC")
    assert _script(dash_duo, "return window.location.pathname;") == "/present"
    until(lambda: _script(dash_duo, POINTS) >= 10)
    for selector in ("#shell-site", "#shell-pages", "#shell-tz", "#shell-theme", "#shell-nav"):
        assert not _script(dash_duo, SHOWN, selector), selector
    assert not dash_duo.driver.find_elements("css selector", ".modebar")
    assert "theme-dark" in dash_duo.find_element("#present-root").get_attribute("class")
    until(lambda: _text(dash_duo, "#present-site") == "shop")
    sizes = _script(dash_duo, """return Array.from(document.querySelectorAll(
        '.present-kpi-value'), e => parseFloat(getComputedStyle(e).fontSize));""")
    assert len(sizes) == 3 and min(sizes) >= 64
    until(lambda: _text(dash_duo, "#present-top li").startswith("1"))
    until(lambda: "/p" in _text(dash_duo, "#present-top"))
    assert dash_duo.get_logs() == []


def test_a_server_slower_than_the_tick_still_draws_the_line_and_the_cards(
        app, dash_duo, monkeypatch):
    """Each read takes longer than the line's 500 ms tick and the cards' 1 s: Dash drops
    the answer of a callback asked again while it runs (plotly/dash#941), so nothing was
    ever drawn; paced, every answer is, late."""
    present_page = page_module("present")
    real = present_page.minute_counts

    def slow(*args, **kwargs):
        time.sleep(1.5)                     # slower than both ticks
        return real(*args, **kwargs)

    monkeypatch.setattr(present_page, "minute_counts", slow)
    _seed(app)
    _open(dash_duo, app, "/present?site=shop&tz=UTC")
    until(lambda: _script(dash_duo, POINTS) >= 10)
    until(lambda: _text(dash_duo, "#present-site") == "shop")
    assert dash_duo.get_logs() == []


def test_keys_pause_theme_window_overlay_full_screen_and_reload(app, dash_duo):
    _seed(app)
    _open(dash_duo, app, "/present?site=shop&tz=UTC")
    until(lambda: _script(dash_duo, POINTS) >= 10)
    _press(dash_duo, " ")
    dash_duo.wait_for_text_to_equal("#present-state", "PAUSED")
    _press(dash_duo, " ")
    dash_duo.wait_for_text_to_equal("#present-state", "LIVE")
    _press(dash_duo, "d")
    until(lambda: "theme-light" in dash_duo.find_element("#present-root").get_attribute(
        "class"))
    assert "theme=light" in _search(dash_duo)
    _press(dash_duo, Keys.ARROW_RIGHT)
    dash_duo.wait_for_text_to_equal("#present-chart-title", "Hits per minute · last 30 min")
    until(lambda: _script(dash_duo, POINTS) >= 29)
    assert "window=30" in _search(dash_duo)
    _press(dash_duo, "?")
    until(lambda: _script(dash_duo, SHOWN, "#keys-overlay"))
    assert "full screen" in dash_duo.find_element("#keys-overlay").text
    _press(dash_duo, Keys.ESCAPE)
    until(lambda: not _script(dash_duo, SHOWN, "#keys-overlay"))
    _press(dash_duo, "f")
    until(lambda: _script(dash_duo, "return !!document.fullscreenElement;"))
    _press(dash_duo, "f")
    until(lambda: _script(dash_duo, "return !document.fullscreenElement;"))
    # A reload is still presenter mode, with the theme and window the keys chose.
    dash_duo.driver.refresh()
    dash_duo.wait_for_element("#present-root")
    until(lambda: "theme-light" in dash_duo.find_element("#present-root").get_attribute(
        "class"))
    dash_duo.wait_for_text_to_equal("#present-chart-title", "Hits per minute · last 30 min")
    assert not _script(dash_duo, SHOWN, "#shell-site")
    assert dash_duo.get_logs() == []


def test_history_keys_today_week_month_compare_and_theme(app, dash_duo):
    _seed(app)
    dash_duo.start_server(app, path="/history?site=shop&tz=UTC")
    dash_duo.wait_for_element("#history-range")
    for key, preset in (("t", "today"), ("m", "30d"), ("w", "7d")):
        _press(dash_duo, key)
        until(lambda preset=preset: _script(
            dash_duo, "return document.querySelector("
                      "'#history-range input[value=\"' + arguments[0] + '\"]').checked;",
            preset))
    until(lambda: "range=" not in _search(dash_duo))  # 7 days is the default
    _press(dash_duo, "c")
    until(lambda: "compare=1" in _search(dash_duo))
    _press(dash_duo, "d")
    until(lambda: "theme=dark" in _search(dash_duo))
    assert dash_duo.get_logs() == []


SHOWING = ("const name = document.querySelector('#present-view-name');"
           " const view = document.querySelector(arguments[1]);"
           " return !!(name && name.textContent === arguments[0] && view"
           " && view.getClientRects().length);")


def _showing(dash_duo, name: str, view: str) -> None:
    """The view's name and the view itself on screen at the same instant (read apart, a
    slow machine could see the name, then the next view already rotated in)."""
    until(lambda: _script(dash_duo, SHOWING, name, view),
          msg=f"{name} was not shown")


def test_playlist_rotates_views(app, dash_duo):
    _seed(app)
    _open(dash_duo, app, "/present?site=shop&tz=UTC&cycle=5&views=live,top,history-30d")
    # Each view in turn, from wherever the first 5 s left it on a slow machine.
    _showing(dash_duo, "Live", "#present-view-live")
    _showing(dash_duo, "Top pages today", "#present-view-top")
    assert not _script(dash_duo, SHOWN, "#present-view-live")
    until(lambda: _script(dash_duo, """const p = document.querySelector(
        '#present-bars .js-plotly-plot'); return !!(p && p.data && p.data[0].y.length);"""))
    _showing(dash_duo, "Last 30 days", "#present-view-history-30d")
    _showing(dash_duo, "Live", "#present-view-live")
    assert dash_duo.get_logs() == []


def test_generator_keys_need_signing_in(app, dash_duo):
    _open(dash_duo, app, "/present?tz=UTC")
    generator = get_generator(app.server)
    _press(dash_duo, "g")
    until(lambda: "Sign in to drive the load generator" in _toast(dash_duo))
    _press(dash_duo, "s")
    assert not generator.status().running
    sign_in(dash_duo, "/present?tz=UTC")
    dash_duo.wait_for_element("#present-root")
    _press(dash_duo, "g")
    until(lambda: _toast(dash_duo) == "Load generator started")
    assert generator.status().running
    _press(dash_duo, "s")
    until(lambda: _toast(dash_duo) == "Spike: ×10 for 30 s")
    _press(dash_duo, "g")
    until(lambda: _toast(dash_duo) == "Load generator stopped")
    until(lambda: not generator.status().running)
    assert dash_duo.get_logs() == []


NOTES = """
const p = document.querySelector('#present-graph .js-plotly-plot');
return p && p.layout && p.layout.annotations ? p.layout.annotations.map(a => a.text) : [];
"""


def test_notes_show_on_the_presenter_line_as_text(app, dash_duo):
    """A note of the window is drawn on the line, its markup shown as characters."""
    from queries.annotations import add_annotation

    _seed(app)
    db = get_services(app.server).db
    add_annotation(db, "shop", dt.datetime.now(dt.UTC) - dt.timedelta(minutes=3),
                   "deployed <b>v2</b>", kind="deploy", author="ci")
    _open(dash_duo, app, "/present?site=shop&tz=UTC")
    until(lambda: any("deployed" in text for text in _script(dash_duo, NOTES)))
    label = next(t for t in _script(dash_duo, NOTES) if "deployed" in t)
    assert "&lt;b&gt;" in label or "<b>" not in label
    assert dash_duo.get_logs() == []


CUT = """return Array.from(document.querySelectorAll('.present-kpi-value'),
    e => e.scrollWidth - e.clientWidth).filter(d => d > 0).length;"""


def test_kpi_numbers_are_not_cut_on_a_phone(app, dash_duo):
    """At 390 px each KPI number fits its card (three 64 px numbers side by side were cut
    at their card's edge: "12,3")."""
    now = dt.datetime.now(dt.UTC)
    # This minute and the next: "hits this minute" shows 12,345 even if the minute turns
    # between seeding and reading.
    seed(get_services(app.server).db, "shop",
         [(now, "/p", 12345), (now + dt.timedelta(minutes=1), "/p", 12345)])
    dash_duo.driver.set_window_size(390, 844)
    _open(dash_duo, app, "/present?site=shop&tz=UTC")
    dash_duo.wait_for_contains_text("#present-kpi-minute", "12,345")
    assert _script(dash_duo, CUT) == 0
    assert dash_duo.get_logs() == []


INSTANT = dt.datetime(2026, 11, 20, 10, 30, 20, tzinfo=dt.UTC)
LABELS = """const p = document.querySelector('#present-graph .js-plotly-plot');
const plot = p && p.querySelector('.nsewdrag');
const labels = p ? Array.from(p.querySelectorAll('g.annotation'), a => {
    const r = a.getBoundingClientRect();
    return [a.textContent, r.left, r.right, r.top, r.bottom];
}) : [];
if (!plot) { return null; }
const r = plot.getBoundingClientRect();
return {plot: [r.left, r.right], labels: labels};"""
LAID_OUT = """const p = document.querySelector('#present-graph .js-plotly-plot');
return (p.layout.annotations || []).map(a => [a.text, a.xanchor, a.yshift]);"""


def _settled(dash_duo, script, seconds=1.0, timeout=WAIT_S):
    """The script's answer once two reads ``seconds`` apart agree."""
    last = _script(dash_duo, script)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(seconds)
        now = _script(dash_duo, script)
        if now == last:
            return now
        last = now
    raise AssertionError(f"still changing: {last}")


@pytest.mark.parametrize("width", [1920, 390])
def test_note_labels_neither_overlap_nor_leave_the_chart(app, dash_duo, width):
    """Five notes in the last three minutes: their labels ran into each other and past
    the right edge of the line."""
    from queries.annotations import add_annotation

    db = get_services(app.server).db
    texts = ["deployed v2.3 with the new checkout and a much longer description",
             "cache flushed", "traffic spike from the newsletter sent to 40,000 readers",
             "load generator stopped", "load generator started: 1 hits/s on 2 sites"]
    with time_machine.travel(INSTANT, tick=True):
        seed(db, "shop", [(INSTANT - dt.timedelta(minutes=m), "/p", 3) for m in range(15)])
        for i, text in enumerate(texts):
            add_annotation(db, "shop", INSTANT - dt.timedelta(seconds=40 * i), text,
                           kind="deploy", author="ci")
        dash_duo.driver.set_window_size(width, 1000)
        _open(dash_duo, app, "/present?site=shop&tz=UTC")
        until(lambda: len((_script(dash_duo, LABELS) or {}).get("labels", [])) == 5)
        _settled(dash_duo, LAID_OUT)   # laid out again for the plot's measured width
        found = _script(dash_duo, LABELS)
    left, right = found["plot"]
    boxes = found["labels"]
    assert all(left - 1 <= box[1] and box[2] <= right + 1 for box in boxes), (found, width)
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert a[2] <= b[1] or b[2] <= a[1] or a[4] <= b[3] or b[4] <= a[3], (a, b)
    assert dash_duo.get_logs() == []


TICKS = """const p = document.querySelector('#present-graph .js-plotly-plot');
return p ? Array.from(p.querySelectorAll('.ytick text'), t => t.textContent) : [];"""


def test_a_spike_note_leaves_the_peak_visible_and_the_axis_separates_thousands(
        app, dash_duo):
    """A spike of 12,000 hits and its note in the same minute: the note's label sat on
    the peak, and the axis read 12000 (Live reads 12,000)."""
    from queries.annotations import add_annotation

    db = get_services(app.server).db
    with time_machine.travel(INSTANT, tick=True):
        seed(db, "shop", [(INSTANT - dt.timedelta(minutes=m), "/p", 12_000 if m == 4 else 900)
                          for m in range(15)])
        add_annotation(db, "shop", INSTANT - dt.timedelta(minutes=4),
                       "traffic spike from the newsletter", kind="spike", author="ci")
        _open(dash_duo, app, "/present?site=shop&tz=UTC")
        until(lambda: len((_script(dash_duo, LABELS) or {}).get("labels", [])) == 1)
        _settled(dash_duo, LAID_OUT)
        found = _script(dash_duo, LABELS)
        ticks = _script(dash_duo, TICKS)
        peak = _script(dash_duo, """const p = document.querySelector(
            '#present-graph .js-plotly-plot');
            const points = Array.from(p.querySelectorAll('.scatterlayer .trace:first-child'
                + ' .point'), e => e.getBoundingClientRect());
            return Math.min(...points.map(r => r.top));""")
    (label,) = found["labels"]
    top = _script(dash_duo, """return document.querySelector('#present-graph .nsewdrag')
        .getBoundingClientRect().top;""")
    assert label[4] <= top + 1 and label[4] <= peak, (label, top, peak)  # above the line
    assert "12,000" in ticks or "10,000" in ticks, ticks
    assert not any(t.isdigit() and int(t) >= 1000 for t in ticks), ticks
    assert dash_duo.get_logs() == []


def test_the_toast_covers_nothing(app, dash_duo):
    """What g did shows in the header's flow (it sat over the chart's time axis)."""
    _seed(app)
    _open(dash_duo, app, "/present?site=shop&tz=UTC")
    sign_in(dash_duo, "/present?site=shop&tz=UTC")
    dash_duo.wait_for_element("#present-root")
    until(lambda: _script(dash_duo, POINTS) >= 10)
    _press(dash_duo, "g")
    until(lambda: _toast(dash_duo) == "Load generator started")
    covered = _script(dash_duo, """const t = document.getElementById('present-toast')
        .getBoundingClientRect();
        return Array.from(document.querySelectorAll(
            '.present-kpi, .present-chart, .present-side, .present-head > span'), e => {
            const r = e.getBoundingClientRect();
            return r.right > t.left && t.right > r.left && r.bottom > t.top && t.bottom > r.top
                ? (e.id || e.className) : null;
        }).filter(Boolean);""")
    assert covered == []
    _press(dash_duo, "g")
    until(lambda: _toast(dash_duo) == "Load generator stopped")
    assert dash_duo.get_logs() == []


def test_the_side_list_shows_lives_top_pages(app, dash_duo, tmp_path):
    """People's page views today, as Live shows them: no stylesheet, no Googlebot."""
    from dimkit import ingest_sample

    with time_machine.travel(INSTANT, tick=True):
        ingest_sample(get_services(app.server).db, "shop", tmp_path,
                      start=INSTANT - dt.timedelta(minutes=2), step=dt.timedelta(seconds=1))
        _open(dash_duo, app, "/present?site=shop&tz=UTC")
        dash_duo.wait_for_text_to_equal(".present-side .present-title", "Top pages today")
        until(lambda: _text(dash_duo, "#present-top").split() == [
            "1", "/", "40", "2", "/about", "20", "3", "/missing", "5"])
    assert dash_duo.get_logs() == []
