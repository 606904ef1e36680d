"""Custom events through ``/hit`` under attack: poisoned bodies, a full disk, a flood of
names and pages, another site's origin. Every 204 is an event stored and counted; every
refusal stores nothing. The clock is frozen at midday: a day's page cap never resets
mid-test."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from dashkit import counted as dashkit_counted
from dashkit import dashboard_app, full_disk, held, register_sites

from dashboard.services import get_services
from queries.custom import reads
from queries.events import custom as raw
from queries.rollups.build import run_rollups

SIGNUP = {"site": "blog", "page": "/pricing", "event": "Signup", "props": {"plan": "pro"},
          "revenue": {"currency": "EUR", "amount": "1.50"}}
POISON = ['{"site": "blog", "page": "/", "event": "Sign\\ud800up"}',
          '{"site": "blog", "page": "/", "event": "Signup", "props": {"plan": "\\udfff"}}',
          '{"site": "blog", "page": "/", "event": "Signup", "props": {"\\ud800": "x"}}',
          '{"site": "blog", "page": "/", "event": "Sign\\u0001up"}',
          '{"site": "blog", "page": "/", "event": "Buy", '
          '"revenue": {"currency": "EUR", "amount": "1\\ud800"}}']


def post(client, body: dict | str, origin: str | None = None):
    data = body if isinstance(body, str) else json.dumps(body)
    return client.post("/hit", data=data, content_type="text/plain;charset=UTF-8",
                       headers={"Origin": origin} if origin else {})


def stored(app) -> list[dict]:
    return list(dashkit_counted(app).db[raw.COLLECTION].find({}, {"_id": 0}))


def counted(app, **read) -> dict[str, int]:
    """Each event name's conversions in the two hours around now, after a rollup run."""
    db = dashkit_counted(app).db
    now = dt.datetime.now(dt.UTC)
    run_rollups(db, now=now + dt.timedelta(hours=2))
    table = reads.events(db, "blog", now - dt.timedelta(hours=2), now + dt.timedelta(hours=2),
                         **read)
    return dict(table[["value", "conversions"]].values.tolist())


def prop_values(app, prop: str) -> dict[str, int]:
    now = dt.datetime.now(dt.UTC)
    table = reads.props(get_services(app.server).db, "blog", now - dt.timedelta(hours=2),
                        now + dt.timedelta(hours=2), prop)
    return dict(table[["value", "conversions"]].values.tolist())


@pytest.fixture
def app(tmp_path, frozen_clock):
    with dashboard_app(tmp_path / "store", rollup_interval=0, beacon_pages_per_day=50) as app:
        register_sites(app, "blog")
        yield app


def test_poisoned_events_are_400s_that_store_nothing_and_stop_nothing(app):
    client = app.server.test_client()
    for body in POISON:
        response = post(client, body)
        assert response.status_code == 400, body
        assert response.get_json()["error"], body
    assert stored(app) == []
    for _ in range(20):
        assert post(client, SIGNUP).status_code == 204
    operators = {"site": "blog", "page": "/", "event": "Buy",
                 "props": {"$gt": "", "a.b": "$where"}}
    assert post(client, operators).status_code == 204       # names and values, as text
    assert counted(app) == {"Signup": 20, "Buy": 1}
    assert prop_values(app, "a.b") == {"$where": 1}


def test_past_a_full_disk_events_are_held_and_every_204_is_stored(app):
    client = app.server.test_client()
    with full_disk(app):
        held(client, [post(client, {**SIGNUP, "props": {"n": str(i)}}) for i in range(60)])
    events = stored(app)
    assert sorted(dict(e["props"])["n"] for e in events) == sorted(str(i) for i in range(60))
    assert {(e["name"], tuple(e["revenue"])) for e in events} == {("Signup", ("EUR", "1.50"))}
    assert client.get("/healthz").status_code == 200
    assert post(client, SIGNUP).status_code == 204


def test_negative_and_non_ascii_amounts_are_400s_and_revenue_never_goes_down(app):
    client = app.server.test_client()
    assert post(client, SIGNUP).status_code == 204
    for amount in ["-999999999999.999999", "-1.50", -2, "\u0661\u0662", "\U0001d7d9\U0001d7da",
                   "1\u0662.00", "\uff11\uff12"]:
        buy = {**SIGNUP, "event": "Buy", "revenue": {"currency": "EUR", "amount": amount}}
        response = post(client, buy)
        assert response.status_code == 400, amount
        assert "ASCII digits, not negative" in response.get_json()["error"], amount
    assert [e["name"] for e in stored(app)] == ["Signup"]
    now = dt.datetime.now(dt.UTC)
    run_rollups(get_services(app.server).db, now=now + dt.timedelta(hours=2))
    table = reads.events(get_services(app.server).db, "blog", now - dt.timedelta(hours=2),
                         now + dt.timedelta(hours=2))
    assert table["revenue"].tolist() == ["EUR 1.50"]


def test_a_flood_of_names_and_pages_is_stored_whole_and_counted_within_the_caps(app):
    client = app.server.test_client()
    for i in range(120):
        assert post(client, {"site": "blog", "page": f"/flood/{i}", "event": f"E{i}",
                             "props": {"k": f"v{i}"}}).status_code == 204
    events = stored(app)
    assert len(events) == 120
    pages = {e["page"] for e in events}
    assert len(pages) == 51 and "/(other)" in pages      # the day's page cap, then one
    names = counted(app)
    assert sum(names.values()) == 120 and len(names) == 120
    assert counted(app, page="/(other)") == {f"E{i}": 1 for i in range(50, 120)}


def test_another_sites_origin_is_refused_and_stores_nothing(tmp_path, frozen_clock):
    sites = "blog=https://blog.example.com, shop=https://shop.example.org"
    with dashboard_app(tmp_path / "store", rollup_interval=0, beacon_sites=sites) as app:
        client = app.server.test_client()
        other = post(client, SIGNUP, origin="https://shop.example.org")
        assert other.status_code == 403
        assert "may not send hits for site 'blog'" in other.get_json()["error"]
        evil = post(client, SIGNUP, origin="https://evil.example.net")
        assert evil.status_code == 403
        assert "Access-Control-Allow-Credentials" not in evil.headers
        assert stored(app) == []
        ok = post(client, SIGNUP, origin="https://blog.example.com")
        assert ok.status_code == 204
        assert ok.headers["Access-Control-Allow-Origin"] == "https://blog.example.com"
        assert [e["name"] for e in stored(app)] == ["Signup"]
