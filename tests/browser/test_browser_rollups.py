"""The Rollups page in a real browser: run now, chart and table, the consistency badge."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from dashkit import dashboard_app, sign_in

import queries
from queries.events.writer import EventWriter

pytestmark = pytest.mark.browser
DAY = dt.datetime(2026, 1, 5, tzinfo=dt.UTC)   # a Monday
# A Thursday afternoon: the rollups cover yesterday whole (until 00:01 UTC they do not)
# and today has backfilled hits.
NOW = dt.datetime(2026, 3, 12, 14, 20, tzinfo=dt.UTC)


@pytest.fixture
def app(tmp_path):
    store = str(tmp_path / "store")
    db = queries.connect(store)
    queries.ensure_indexes(db)
    writer = EventWriter(db)
    for i in range(30):
        t = DAY + dt.timedelta(hours=i * 1.5)
        writer.add({"time": t, "site": "site-1", "host": "10.0.0.1", "method": "GET",
                    "path": f"/p{i % 3}", "query": "", "status": 404 if i % 10 == 0 else 200,
                    "bytes": 100, "referrer": None, "user_agent": "test"})
        queries.log_hit(db, t, "site-1", f"/p{i % 3}")
    writer.flush()
    queries.log_hit(db, DAY + dt.timedelta(days=1, hours=3), "site-1", "/p0")  # stats only
    db.client.close()
    with dashboard_app(store, rollup_interval=0) as app:
        yield app


def test_run_now_fills_the_page_and_the_badge_names_the_differing_day(dash_duo, app):
    dash_duo.start_server(app, navigate=False)
    sign_in(dash_duo, "/rollups?site=site-1")
    dash_duo.wait_for_contains_text("#rollups-table", "No day rollups for site-1 yet")
    dash_duo.find_element("#rollups-run").click()
    dash_duo.wait_for_contains_text("#rollups-badge", "1 of 2 day buckets differ")
    badge = dash_duo.find_element("#rollups-badge").text
    assert "2026-01-06: rollup 14 vs stats 15" in badge
    rows = dash_duo.find_elements("#rollups-datatable tbody tr")
    assert len(rows) == 2                                    # two days
    assert "2026-01-05" in rows[0].text and "16" in rows[0].text
    dash_duo.find_element("#rollups-level label:nth-child(3)").click()   # week
    dash_duo.wait_for_contains_text("#rollups-badge", "1 of 1 week buckets differ")
    dash_duo.wait_for_contains_text("#rollups-status", "Events waiting: 0")
    assert dash_duo.get_logs() == []


@pytest.fixture
def backfilled(tmp_path):
    """A demo-like store: 10 days of backfilled history, rolled up once, then +5 planted
    on one hour of one page's daily document; the clock starts at ``NOW`` and runs on."""
    from queries.loadgen import TrafficModel, backfill_history
    from queries.rollups.build import run_rollups
    from queries.stats import schema

    with time_machine.travel(NOW, tick=True):
        store = str(tmp_path / "store")
        db = queries.connect(store)
        queries.ensure_indexes(db)
        model = TrafficModel(sites=1, pages=3, seed=3)
        backfill_history(db, model, rate=0.05, days=10)
        run_rollups(db)
        site, pages = model.site_names[0], model.page_names[model.site_names[0]]
        today = NOW.replace(hour=0, minute=0)
        planted = today - dt.timedelta(days=today.weekday() + 3)   # last week's Friday: a
        # complete day in a complete week, so every level compares it
        doc_id = schema.daily_id(planted, site, pages[1])
        db[schema.DAILY].update_one({"_id": doc_id}, {"$inc": {"hourly.10": 5}})
        db.client.close()
        with dashboard_app(store, rollup_interval=0) as app:
            yield app, site, pages, planted, doc_id


def test_backfilled_demo_is_consistent_and_a_planted_hour_is_named(dash_duo, backfilled):
    app, site, pages, planted, doc_id = backfilled
    dash_duo.start_server(app, path=f"/rollups?site={site}&tz=UTC")
    dash_duo.wait_for_contains_text("#rollups-badge", "Consistent: 10 day buckets")
    badge = dash_duo.find_element("#rollups-badge").text
    assert "1 bucket in progress not compared" in badge                  # today
    assert "agree with themselves" in badge
    assert dash_duo.find_element("#rollups-zone").text == ""             # UTC: no note
    # The selected pages, in another zone.
    query = "&".join(f"page={p}" for p in pages[:2])
    dash_duo.wait_for_page(
        f"{dash_duo.server_url}/rollups?site={site}&tz=Europe/Paris&{query}")
    dash_duo.wait_for_contains_text("#rollups-badge", "1 of 20 day buckets differ")
    badge = dash_duo.find_element("#rollups-badge").text
    assert f"{planted:%Y-%m-%d} · {pages[1]}: rollup" in badge
    assert doc_id in badge and "Σ hourly" in badge                       # invariants
    assert "Rollup buckets are UTC" in dash_duo.find_element("#rollups-zone").text
    table_pages = {row.find_elements("css selector", "td")[1].text
                   for row in dash_duo.find_elements("#rollups-datatable tbody tr")}
    assert table_pages == set(pages[:2])
    dash_duo.find_element("#rollups-level label:nth-child(3)").click()   # week
    dash_duo.wait_for_contains_text("#rollups-badge", "week buckets differ")
    assert dash_duo.get_logs() == []
