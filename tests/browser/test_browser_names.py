"""Names are text in Chromium: pages named ``<a href="https://example.org">click</a>`` and
``<b>x</b>`` show as their characters in History's and Rollups' legends, with no link
and no bold inside the plot."""

from __future__ import annotations

import datetime as dt
from urllib.parse import urlencode

import pytest
from browserkit import until
from dashkit import dashboard_app

import queries
from dashboard.rollup_job import rollup_job
from queries.events.writer import EventWriter

LINK = '/<a href="https://example.org">click</a>'
BOLD = "/<b>x</b>"
DAY = dt.datetime(2026, 1, 5, tzinfo=dt.UTC)
LEGEND = """
const plot = document.querySelector(arguments[0] + ' .js-plotly-plot');
if (!plot) { return null; }
return {names: [...plot.querySelectorAll('.legendtext')].map(t => t.textContent),
        links: plot.querySelectorAll('a').length,
        bold: [...plot.querySelectorAll('.legendtext tspan')]
              .filter(t => (t.getAttribute('style') || '').includes('bold')).length};
"""


@pytest.fixture
def app(tmp_path):
    store = str(tmp_path / "store")
    db = queries.connect(store)
    queries.ensure_indexes(db)
    writer = EventWriter(db)
    for i in range(12):
        page, when = (LINK, BOLD)[i % 2], DAY + dt.timedelta(hours=i)
        writer.add({"time": when, "site": "s", "host": "10.0.0.1", "method": "GET",
                    "path": page, "query": "", "status": 200, "bytes": 100,
                    "referrer": None, "user_agent": "test"})
        queries.log_hit(db, when, "s", page)
    writer.flush()
    db.client.close()
    with dashboard_app(store, rollup_interval=0) as app:
        rollup_job(app.server).run_now()
        yield app


def legend(dash_duo, graph):
    return dash_duo.driver.execute_script(LEGEND, graph)


def shows_both(dash_duo, graph):
    found = legend(dash_duo, graph)
    return bool(found) and {LINK, BOLD} <= set(found["names"])


def test_hostile_page_names_are_text_in_history_and_rollups_legends(app, dash_duo):
    dash_duo.start_server(app, navigate=False)
    pages = urlencode([("site", "s"), ("page", LINK), ("page", BOLD), ("tz", "UTC")])
    dash_duo.driver.get(f"{dash_duo.server_url}/history?{pages}&range=custom"
                        "&start=2026-01-05&end=2026-01-06&gran=hour")
    until(lambda: shows_both(dash_duo, "#history-graph"),
          msg=f"History's legend: {legend(dash_duo, '#history-graph')}")
    found = legend(dash_duo, "#history-graph")
    assert found["links"] == 0 and found["bold"] == 0

    dash_duo.driver.get(f"{dash_duo.server_url}/rollups?{pages}")
    until(lambda: shows_both(dash_duo, "#rollups-graph"),
          msg=f"Rollups' legend: {legend(dash_duo, '#rollups-graph')}")
    found = legend(dash_duo, "#rollups-graph")
    assert found["links"] == 0 and found["bold"] == 0
    assert not dash_duo.driver.find_elements("css selector", "a[href='https://example.org']")
    assert dash_duo.get_logs() == []
