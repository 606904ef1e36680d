"""Live in Chromium right after the demo's backfill: the counters hold
the backfilled minutes and the raw events only live traffic's few hits, so the people
cards say their figure is unknown rather than "Active visitors 1" beside thousands of
hits; the running minute is reached by a dashed line, the whole minutes stay solid; each
notes legend entry has its markers' colour. After a reload, and a minute later (the
server's clock moved on), the same; five more minutes of live traffic, and the people
are counted."""

import datetime as dt

import time_machine
from browserkit import until

from dashboard.services import get_services
from queries import annotations as notes
from queries.counting import DimensionRecorder
from queries.events.writer import EventWriter
from queries.loadgen import TrafficModel, backfill_history

NOW = dt.datetime(2026, 3, 12, 14, 20, 30, tzinfo=dt.UTC)
MODEL = TrafficModel(sites=1, pages=4, seed=3)
SITE = MODEL.site_names[0]
AGENT = "Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0"

# The chart as drawn: each data trace's dash and last x, the solid copies' last x, the
# shaded bucket's start.
CHART = """
const p = document.querySelector('#live-graph .js-plotly-plot');
if (!p || !p._fullData || !p._fullData.length) { return null; }
const lines = p._fullData.filter(t => t.yaxis !== 'y2' && t.name === 'Whole site');
const shade = (p._fullLayout.shapes || []).filter(s => s.name === 'incomplete');
return {data: lines.filter(t => !t.showlegend).map(t => [t.line.dash, t.x[t.x.length - 1]]),
        solid: lines.filter(t => t.showlegend).map(t => [t.line.dash, t.x[t.x.length - 1]]),
        shade: shade.map(s => s.x0)};
"""
# Each notes legend entry: its text, its symbol's colour as drawn, and the colours its
# markers are drawn in on the chart.
LEGEND = """
const p = document.querySelector('#live-graph .js-plotly-plot');
if (!p) { return null; }
const out = [];
p.querySelectorAll('.legend .traces').forEach(item => {
  const trace = item.__data__[0].trace;
  const text = item.querySelector('.legendtext').textContent;
  if (!text.startsWith('Notes')) { return; }
  const symbol = item.querySelector('.legendpoints path').style.fill;
  const layer = p.querySelectorAll('.scatterlayer .trace')[trace.index];
  const drawn = Array.from(layer.querySelectorAll('.points path')).map(m => m.style.fill);
  out.push([text, symbol, [...new Set(drawn)]]);
});
return out;
"""


def _live_hits(db, recorder, start: dt.datetime, seconds: int) -> None:
    """Live traffic's hits, counted and kept as raw events: one visitor every 10 s."""
    writer = EventWriter(db)
    for second in range(0, seconds, 10):
        when = start + dt.timedelta(seconds=second)
        writer.add({"time": when, "site": SITE, "host": f"203.0.113.{second // 10 + 1}",
                    "method": "GET", "path": "/", "query": "", "status": 200, "bytes": 1,
                    "referrer": "-", "user_agent": AGENT})
        recorder.record(SITE, "/", when)
    writer.close()
    recorder.flush()


def _chart(dash_duo, running: dt.datetime) -> dict:
    """Wait for the chart whose running minute is ``running`` (UTC)."""
    last = f"{running:%Y-%m-%d %H:%M}"
    found = until(lambda: (lambda c: c if c and c["data"] and str(c["data"][0][1]).startswith(
        last) else None)(dash_duo.driver.execute_script(CHART)),
        msg=lambda: f"no chart running at {last}: {dash_duo.driver.execute_script(CHART)}")
    return found


def _drawn_as_running(dash_duo, running: dt.datetime) -> None:
    chart = _chart(dash_duo, running)
    before = f"{running - dt.timedelta(minutes=1):%Y-%m-%d %H:%M}"
    assert [dash for dash, _ in chart["data"]] == ["dash"]
    assert [dash for dash, _ in chart["solid"]] == ["solid"]
    assert str(chart["solid"][0][1]).startswith(before)       # solid up to the last whole
    assert [str(x)[:16] for x in chart["shade"]] == [f"{running:%Y-%m-%d %H:%M}"]


def _notes_in_their_colours(dash_duo) -> None:
    legend = until(lambda: (lambda found: found if found and len(found) == 2 else None)(
        dash_duo.driver.execute_script(LEGEND)),
        msg=lambda: f"notes legend: {dash_duo.driver.execute_script(LEGEND)}")
    assert sorted(text for text, _, _ in legend) == ["Notes · Backfill", "Notes · Load test"]
    for _text, symbol, drawn in legend:
        assert drawn == [symbol]


def _unknown_people(dash_duo) -> None:
    dash_duo.wait_for_text_to_equal("#live-kpi-active", "–")
    dash_duo.wait_for_contains_text("#live-people", "unknown: raw events kept for only")
    dash_duo.wait_for_contains_text("#live-kpis", "every hit, bots included")


def test_live_after_the_demos_backfill(app, dash_duo):
    with time_machine.travel(NOW, tick=True) as traveller:
        services = get_services(app.server)
        db = services.db
        with DimensionRecorder(db) as dimensions:
            backfill_history(db, MODEL, rate=2, days=1, now=NOW, dimensions=dimensions)
        _live_hits(db, services.recorder, NOW.replace(second=0), 30)
        at = NOW.replace(second=5)          # the generator's two notes, in one second
        notes.add_annotation(db, SITE, at, "backfilled 1 days of synthetic traffic",
                             "backfill", "hitboard")
        notes.add_annotation(db, SITE, at, "load generator started: 2 hits/s",
                             "load-test", "hitboard")
        minute = NOW.replace(second=0)
        dash_duo.start_server(app, path=f"/?site={SITE}&tz=UTC&window=15")
        _unknown_people(dash_duo)
        _drawn_as_running(dash_duo, minute)
        _notes_in_their_colours(dash_duo)

        dash_duo.driver.refresh()
        _unknown_people(dash_duo)
        _drawn_as_running(dash_duo, minute)
        _notes_in_their_colours(dash_duo)

        traveller.shift(dt.timedelta(minutes=1))      # a minute of waiting
        _drawn_as_running(dash_duo, minute + dt.timedelta(minutes=1))
        _notes_in_their_colours(dash_duo)

        # Five more minutes of live traffic alone: the people of the last five minutes
        # are all in the raw events, and counted.
        traveller.shift(dt.timedelta(minutes=6))
        _live_hits(db, services.recorder, minute + dt.timedelta(minutes=1), 6 * 60)
        running = minute + dt.timedelta(minutes=7)
        _drawn_as_running(dash_duo, running)
        until(lambda: dash_duo.find_element("#live-kpi-active").text not in ("–", ""),
              msg=lambda: dash_duo.find_element("#live-people").text)
        assert "unknown" not in dash_duo.find_element("#live-kpi-active").find_element(
            "xpath", "..").text
    assert dash_duo.get_logs() == []
