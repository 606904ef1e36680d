"""A first start on a store full of raw events no rollup has read: the rollup job starts at
once, and the landing page shows data meanwhile (a rollup never starves the reads)."""

import datetime as dt

import pytest
from browserkit import until
from dashkit import dashboard_app, seed

import queries
from dashboard.rollup_job import rollup_job
from queries.events.writer import EventWriter

pytestmark = pytest.mark.usefixtures("frozen_clock")   # the same days at any hour

EVENTS = 20_000


@pytest.fixture
def app(tmp_path):
    store = tmp_path / "store"
    db = queries.connect(str(store))
    queries.ensure_indexes(db)
    now = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    seed(db, "big", [(now - dt.timedelta(minutes=5), "/", 42)])
    writer = EventWriter(db, batch_size=5000)
    for i in range(EVENTS):  # a day of raw events over 500 pages, not rolled up yet
        writer.add({"time": now - dt.timedelta(seconds=i * 86_400 // EVENTS), "site": "big",
                    "host": "10.0.0.1", "method": "GET", "path": f"/p{i % 500}", "query": "",
                    "status": 200, "bytes": 100, "referrer": "", "user_agent": "t"})
    writer.close()
    db.client.close()
    with dashboard_app(store, rollup_interval=1) as app:
        yield app


def test_live_shows_data_while_the_first_rollup_runs(app, dash_duo):
    dash_duo.start_server(app, path="/?site=big&tz=UTC")
    # The first rollup shares the cores meanwhile: on a loaded machine the page is slow.
    dash_duo.wait_for_text_to_equal("#live-kpi-hour", "42", timeout=40)
    job = rollup_job(app.server)
    until(lambda: job.last is not None, timeout=120)  # and the rollup does finish
    assert job.last.buckets["hourly"] == 24 or job.last.buckets["hourly"] == 25
    assert dash_duo.get_logs() == []
