"""The /hit beacon across origins: CORS preflights, origin policy, HEAD, referrer, /hit.js."""

from __future__ import annotations

import datetime as dt
import json

import dashkit
import pytest
from dashkit import dashboard_app, register_sites
from fakes import stored_events

import queries
from dashboard.routes.beacon_origins import normalise_origin, parse_policy
from dashboard.services import get_services
from queries.errors import HitboardError

SITE_ORIGIN = "https://blog.example.com"
pytestmark = pytest.mark.usefixtures("frozen_clock")   # the same hours at any hour


@pytest.fixture
def open_app(tmp_path):
    """A server whose registered site names no origin: any page may send its hits."""
    with dashboard_app(tmp_path / "store", rollup_interval=0) as app:
        register_sites(app, "blog")
        yield app


@pytest.fixture
def listed_app(tmp_path):
    sites = "blog=https://blog.example.com, shop.example.org"
    with dashboard_app(tmp_path / "store", rollup_interval=0, beacon_sites=sites) as app:
        yield app


def preflight(client, origin):
    return client.options("/hit", headers={
        "Origin": origin, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type"})


def counted(app, site):
    services = dashkit.counted(app)
    return queries.top_pages(services.db, site, *_today())["hits"].to_dict()


def _today():
    now = dt.datetime.now(dt.UTC)
    return now - dt.timedelta(hours=1), now + dt.timedelta(hours=1)


def test_preflight_names_origin_methods_and_headers(open_app):
    response = preflight(open_app.server.test_client(), "http://127.0.0.1:9999")
    assert response.status_code == 204
    headers = response.headers
    assert headers["Access-Control-Allow-Origin"] == "http://127.0.0.1:9999"
    assert headers["Access-Control-Allow-Credentials"] == "true"   # sendBeacon's mode
    assert "POST" in headers["Access-Control-Allow-Methods"]
    assert "content-type" in headers["Access-Control-Allow-Headers"].lower()
    assert "Origin" in headers["Vary"]


def test_listed_sites_limit_the_origins(listed_app):
    client = listed_app.server.test_client()
    for origin in (SITE_ORIGIN, "https://shop.example.org", "http://www.shop.example.org:8080"):
        response = preflight(client, origin)
        assert response.headers["Access-Control-Allow-Origin"] == origin, origin
    refused = preflight(client, "https://evil.example.net")
    assert refused.status_code == 403 and "Access-Control-Allow-Origin" not in refused.headers
    body = json.dumps({"site": "blog", "page": "/a"})
    ok = client.post("/hit", data=body, content_type="application/json",
                     headers={"Origin": SITE_ORIGIN})
    assert ok.status_code == 204 and ok.headers["Access-Control-Allow-Origin"] == SITE_ORIGIN
    wrong = client.post("/hit", data=body, content_type="application/json",
                        headers={"Origin": "https://shop.example.org"})
    assert wrong.status_code == 403 and "may not send hits for site 'blog'" in wrong.get_json()[
        "error"]
    evil = client.post("/hit", data=body, content_type="text/plain",
                       headers={"Origin": "https://evil.example.net"})
    assert evil.status_code == 403 and "Access-Control-Allow-Credentials" not in evil.headers
    assert counted(listed_app, "blog") == {"/a": 1}


def test_head_answers_200_and_counts_nothing(open_app):
    client = open_app.server.test_client()
    assert client.head("/hit").status_code == 200
    assert client.head("/hit?site=blog&page=/a").status_code == 200
    assert queries.list_sites(get_services(open_app.server).db) == []


def test_sendbeacon_bodies_and_referrer(open_app):
    client = open_app.server.test_client()
    body = json.dumps({"site": "blog", "page": "/a", "referrer": "https://news.example/x"})
    for content_type in ("text/plain;charset=UTF-8", "application/json"):
        response = client.post("/hit", data=body, content_type=content_type,
                               headers={"Origin": "http://127.0.0.1:1"})
        assert response.status_code == 204
    assert client.get("/hit?site=blog&page=/b&referrer=").status_code == 200
    unsent = json.dumps({"site": "blog", "page": "/b", "referrer": None})   # JSON null
    assert client.post("/hit", data=unsent).status_code == 204
    bad = client.post("/hit", data=json.dumps({"site": "blog", "page": "/a", "referrer": 3}))
    assert bad.status_code == 400 and "referrer must be a string" in bad.get_json()["error"]
    assert counted(open_app, "blog") == {"/a": 2, "/b": 2}
    services = dashkit.counted(open_app)
    referrers = {e["path"]: e.get("referrer") for e in stored_events(services.db)}
    assert referrers == {"/a": "https://news.example/x", "/b": None}


def test_hit_js_is_small_cookieless_and_not_loaded_by_the_dashboard(open_app):
    client = open_app.server.test_client()
    script = client.get("/hit.js")
    assert script.status_code == 200 and script.mimetype == "text/javascript"
    assert len(script.data) < 2048 and b".cookie" not in script.data
    assert b"Storage" not in script.data
    assert "Set-Cookie" not in script.headers
    assert b"doNotTrack" in script.data and b"sendBeacon" in script.data
    assert b"hit.js" not in client.get("/").data


def test_policy_parsing():
    policy = parse_policy("blog=https://Blog.Example.com:443, 127.0.0.1")
    assert policy.sites == {"blog": frozenset({"https://blog.example.com"}),
                            "127.0.0.1": frozenset()}
    assert policy.site_accepts("127.0.0.1", "http://127.0.0.1:8123")
    assert not policy.site_accepts("blog", "http://blog.example.com")
    assert normalise_origin("null") is None
    with pytest.raises(HitboardError, match="is not an origin"):
        parse_policy("blog=blog.example.com/path")
    assert parse_policy("").sites is None
