"""Notes and the expected band in Chromium: a note made with the CLI shows on History and
Live, one made by clicking the chart survives a reload, a ``<script>`` note runs nothing,
and the band shows with 8 weeks of history and not with 2 days."""

import datetime as dt

import numpy as np
import pytest
from browserkit import until
from click.testing import CliRunner
from dashkit import seed, sign_in
from selenium.webdriver.common.action_chains import ActionChains

import queries
from dashboard.cli import main
from dashboard.services import get_services
from queries.jobs.backfill import DayCounts

pytestmark = pytest.mark.usefixtures("frozen_clock")   # the same days at any hour

TRACES = """const plot = document.querySelector(arguments[0] + ' .js-plotly-plot');
return plot && plot.data ? plot.data.map(t => [t.name || '', String(t.hovertext || '')]) : [];"""
XSS = '<script>window.__pwned = 1</script><img src="/nothing.png" onerror="window.__pwned = 2">'


def open_page(dash_duo, app, path):
    """``path`` in a browser signed in (notes are added by the admin)."""
    dash_duo.start_server(app, navigate=False)
    sign_in(dash_duo, path)


def last_two_hours(recent: dt.datetime) -> str:
    """History over the two hours up to ``recent``: ``range=today`` would miss a note
    made minutes before when the test runs just after midnight UTC."""
    start, end = recent - dt.timedelta(hours=2), recent + dt.timedelta(minutes=1)
    return (f"/history?site=s&tz=UTC&range=custom&start={start:%Y-%m-%dT%H:%M}"
            f"&end={end:%Y-%m-%dT%H:%M}&gran=minute")


def traces(dash_duo, graph):
    return dash_duo.driver.execute_script(TRACES, graph)


def wait_for_trace(dash_duo, graph, name, text=""):
    until(lambda: any(n.startswith(name) and text in hover
                      for n, hover in traces(dash_duo, graph)),
          msg=f"no trace {name!r} with {text!r} on {graph}: {traces(dash_duo, graph)}")


def annotate(store, *args):
    result = CliRunner().invoke(main, ["annotate", *args, "--store", str(store)])
    assert result.exit_code == 0, result.output


def flat_history(db, site, days, now):
    """``days`` whole UTC days before ``now``'s day at 2 hits a minute, then today so far."""
    today = dt.datetime(now.year, now.month, now.day, tzinfo=dt.UTC)
    items = [DayCounts(site, today - dt.timedelta(days=k), ["/a"],
                       np.full((1, 1440), 2, dtype=np.int64)) for k in range(days, 0, -1)]
    minutes = np.zeros((1, 1440), dtype=np.int64)
    minutes[0, :now.hour * 60 + now.minute] = 2
    queries.backfill(db, [*items, DayCounts(site, today, ["/a"], minutes)])


@pytest.fixture
def recent(app):
    """Site s: hits every minute of the last two hours."""
    now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    seed(get_services(app.server).db, "s",
         [(now - dt.timedelta(minutes=m), "/a", 3) for m in range(1, 120)])
    return now


def test_a_note_made_with_the_cli_shows_on_history_and_live(app, recent, dash_duo, tmp_path):
    at = (recent - dt.timedelta(minutes=20)).isoformat()
    annotate(tmp_path / "store", "--site", "s", "--at", at, "--text", "deployed v2.3",
             "--kind", "deploy")
    open_page(dash_duo, app, last_two_hours(recent))
    wait_for_trace(dash_duo, "#history-graph", "Notes", "deployed v2.3")
    dash_duo.wait_for_contains_text("#history-notes", "deployed v2.3")
    dash_duo.wait_for_contains_text("#history-notes", "Deploy")

    dash_duo.driver.get(dash_duo.server_url + "/?site=s&tz=UTC")
    wait_for_trace(dash_duo, "#live-graph", "Notes", "deployed v2.3")
    assert dash_duo.get_logs() == []


def test_a_note_made_by_clicking_the_chart_survives_a_reload(app, recent, dash_duo):
    open_page(dash_duo, app, "/?site=s&tz=UTC&window=15")
    until(lambda: any(n == "Whole site" for n, _ in traces(dash_duo, "#live-graph")))
    dash_duo.find_element("#live-pause").click()
    dash_duo.wait_for_text_to_equal("#live-pause", "Resume")
    target = (recent - dt.timedelta(minutes=5)).strftime("%Y-%m-%d %H:%M")

    def click_point():
        drag = dash_duo.find_element("#live-graph .nsewdrag")
        offset = dash_duo.driver.execute_script(
            """const xa = document.querySelector('#live-graph .js-plotly-plot')._fullLayout.xaxis;
            return xa.l2p(xa.d2l(arguments[0])) - xa._length / 2;""", target)
        ActionChains(dash_duo.driver).move_to_element(drag).move_by_offset(
            round(offset), 0).click().perform()
        return dash_duo.find_element("#live-note-time").get_attribute("value") == target

    until(click_point, msg="a click did not fill the note's time")
    dash_duo.find_element("#live-note-text").send_keys("cache flushed")
    dash_duo.find_element("#live-note-add").click()
    dash_duo.wait_for_text_to_equal("#live-note-status", "Note added.")
    wait_for_trace(dash_duo, "#live-graph", "Notes", "cache flushed")

    dash_duo.driver.refresh()
    wait_for_trace(dash_duo, "#live-graph", "Notes", "cache flushed")
    stored = queries.annotations.list_annotations(get_services(app.server).db, "s")
    assert [(n["text"], n["time"].strftime("%Y-%m-%d %H:%M")) for n in stored] == [
        ("cache flushed", target)]
    assert dash_duo.get_logs() == []


def test_a_script_note_is_shown_as_text_and_runs_nothing(app, recent, dash_duo, tmp_path):
    annotate(tmp_path / "store", "--site", "s", "--at",
             (recent - dt.timedelta(minutes=30)).isoformat(), "--text", XSS)
    open_page(dash_duo, app, last_two_hours(recent))
    dash_duo.wait_for_contains_text("#history-notes", "<script>window.__pwned = 1</script>")
    wait_for_trace(dash_duo, "#history-graph", "Notes", "&lt;script&gt;")
    hover = dash_duo.driver.execute_script(
        "return document.querySelector('#history-graph .js-plotly-plot').innerHTML")
    assert "<script>window" not in hover
    assert dash_duo.driver.execute_script("return window.__pwned === undefined")
    inside = "return document.querySelectorAll('#history-notes img, #history-notes script')"
    assert dash_duo.driver.execute_script(inside + ".length") == 0
    assert dash_duo.get_logs() == []


@pytest.mark.parametrize(("days", "shown"), [(56, True), (2, False)])
def test_the_expected_band_needs_weeks_of_history(app, dash_duo, days, shown):
    flat_history(get_services(app.server).db, "s", days, dt.datetime.now(dt.UTC))
    open_page(dash_duo, app, "/history?site=s&range=7d&tz=UTC&gran=hour")
    dash_duo.wait_for_contains_text("#history-totals", "Humans")
    until(lambda: any(n == "Humans" for n, _ in traces(dash_duo, "#history-graph")))
    names = [n for n, _ in traces(dash_duo, "#history-graph")]
    band = [n for n in names if n.startswith("Expected range")]
    if shown:
        assert band == ["Expected range (10th–90th percentile<br>of the same weekday and "
                        "hour,<br>previous 7 weeks)"]
        legend = dash_duo.find_element("#history-graph .legend").text
        assert "10th–90th percentile" in legend
    else:
        assert band == []
    assert dash_duo.get_logs() == []


LEGEND_OVERFLOW = """const graph = document.querySelector('#history-graph .main-svg');
const right = graph.getBoundingClientRect().right;
return Array.from(document.querySelectorAll('#history-graph .legend text'))
    .map(t => t.getBoundingClientRect().right - right).filter(d => d > 0).length;"""


def test_the_expected_band_legend_fits_a_phone(app, dash_duo):
    """At 390 px every line of the legend stays inside the chart (the band's second line
    ran past its right edge, cut off)."""
    flat_history(get_services(app.server).db, "s", 56, dt.datetime.now(dt.UTC))
    dash_duo.start_server(app, navigate=False)
    dash_duo.driver.set_window_size(390, 1000)
    dash_duo.driver.get(dash_duo.server_url + "/history?site=s&range=7d&tz=UTC&gran=hour")
    until(lambda: any(n.startswith("Expected range")
                      for n, _ in traces(dash_duo, "#history-graph")))
    dash_duo.wait_for_contains_text("#history-graph .legend", "10th–90th percentile")
    assert dash_duo.driver.execute_script(LEGEND_OVERFLOW) == 0
    assert dash_duo.get_logs() == []
