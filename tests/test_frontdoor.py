"""dashboard.frontdoor without a server process: the limits' table and body reader, their
settings, and the app's own guards (Flask's test client, as any server but ours sees
the app)."""

from __future__ import annotations

import io
import json

import pytest
from dashkit import ADMIN_TOKEN, dashboard_app, post_callback

from dashboard.cli.serve import WORKER_CLASS, gunicorn_options
from dashboard.frontdoor.limits import SPOOL_BYTES, BodyTooLarge, Limits, read_body
from dashboard.settings import InvalidSettingError, resolve

LIMITS = Limits(header_timeout=10, body_timeout=30, beacon_body=16384,
                callback_body=4 * 1024 ** 2, body=1024 ** 2)


@pytest.mark.parametrize("path, limit", [
    ("/hit", 16384), ("/%68it", 16384), ("/_dash-update-component", 4 * 1024 ** 2),
    ("/api/annotations", 1024 ** 2), ("/hit/x", 1024 ** 2), ("/", 1024 ** 2),
    ("/%ff%fe", 1024 ** 2)])
def test_each_route_has_its_body_limit(path, limit):
    assert LIMITS.body_limit(path) == limit


def test_a_body_is_read_whole_up_to_its_limit():
    body, size = read_body(io.BytesIO(b"x" * 100), 100)
    assert (body.read(), size) == (b"x" * 100, 100)
    empty, size = read_body(io.BytesIO(b""), 100)
    assert (empty.read(), size) == (b"", 0)


def test_a_body_past_its_limit_is_refused_having_read_one_byte_more():
    stream = io.BytesIO(b"x" * 10_000)
    with pytest.raises(BodyTooLarge, match="at most 100 bytes"):
        read_body(stream, 100)
    assert stream.tell() == 101


def test_a_large_body_waits_on_disk_not_in_memory():
    body, size = read_body(io.BytesIO(b"y" * (SPOOL_BYTES + 1)), 1024 ** 2)
    assert size == SPOOL_BYTES + 1 and body._rolled          # a real temporary file
    assert body.read() == b"y" * size


def test_limits_are_settings_with_documented_defaults():
    settings = resolve({}, environ={})
    assert Limits.from_settings(settings) == LIMITS
    assert (settings.connections, settings.threads) == (1000, 8)
    given = resolve({"beacon_max_body": "4K"}, environ={"HITBOARD_MAX_BODY": "2M",
                                                        "HITBOARD_HEADER_TIMEOUT": "2.5"})
    assert (given.beacon_max_body, given.max_body, given.header_timeout) == (
        4096, 2 * 1024 ** 2, 2.5)
    for name, value in (("max_body", "1G"), ("max_body", "0"), ("body_timeout", "0")):
        with pytest.raises(InvalidSettingError, match=name):
            resolve({name: value}, environ={})


def test_serve_runs_the_front_door_worker_with_its_connections():
    options = gunicorn_options(resolve({"connections": 50}, environ={}))
    assert options["worker_class"] == WORKER_CLASS
    assert options["worker_connections"] == 50
    assert options["keepalive"] > 0     # else gunicorn reads a request head without deadline


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with dashboard_app(tmp_path_factory.mktemp("frontdoor") / "store",
                       rollup_interval=0) as app:
        yield app.server.test_client()


@pytest.mark.parametrize("path, size", [("/hit", 16385),
                                        ("/_dash-update-component", 4 * 1024 ** 2 + 1),
                                        ("/api/annotations", 1024 ** 2 + 1)])
def test_flask_refuses_a_body_over_its_route_limit_with_a_reason(client, path, size):
    response = client.post(path, data=b"x" * size, content_type="application/json",
                           headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert response.status_code == 413
    assert "may be at most" in response.get_json()["error"]


def test_a_body_within_the_beacon_limit_reaches_the_beacon(client):
    response = client.post("/hit", data=json.dumps({"site": "s", "page": "/" + "a" * 5000}))
    assert response.status_code in (400, 413)                 # the beacon's own verdict
    assert "may be at most 8,192" not in response.get_json()["error"]


@pytest.mark.parametrize("path", [
    "/_dash-component-suites/dash/../../../etc/passwd",
    "/_dash-component-suites/dash/%2e%2e/%2e%2e/x.js",
    "/_dash-component-suites/dash/x%00.js",
    "/_dash-component-suites/dash/deps/polyfill@7.v4_4_1m1.js",
    "/_dash-component-suites/nope/x.js",
    "/_dash-component-suites/%ff%fe/x.js",
    "/_dash-component-suites/dash/%ff.js",
    "/_dash-component-suites/dash/.js",
    "/_dash-component-suites/dash/" + "a" * 3000 + ".js",
])
def test_odd_asset_paths_are_missing_files(client, path, caplog):
    response = client.get(path)
    assert response.status_code == 404
    assert "Traceback" not in caplog.text


def test_a_real_asset_is_still_served(client):
    html = client.get("/").get_data(as_text=True)
    script = html.split('src="')[1].split('"')[0]
    assert script.startswith("/_dash-component-suites/")
    assert client.get(script).status_code == 200


@pytest.mark.parametrize("body, reason", [
    (b"junk", "JSON object"), (b"[]", "JSON object"), (b"{}", "no such callback"),
    (json.dumps({"output": "nope.children"}).encode(), "no such callback"),
    (json.dumps({"output": "data-content.children", "inputs": []}).encode(), "inputs"),
    (json.dumps({"output": "data-content.children", "inputs": [
        {"id": "url", "property": "search", "value": ""}]}).encode(), "outputs"),
    (json.dumps({"output": "data-content.children", "inputs": [
        {"id": "url", "property": "search", "value": ""}],
        "outputs": {"id": "data-content", "property": "children"},
        "changedPropIds": [1]}).encode(), "changedPropIds"),
])
def test_a_request_for_no_callback_of_the_app_is_a_400(client, body, reason, caplog):
    response = client.post("/_dash-update-component", data=body,
                           content_type="application/json")
    assert response.status_code == 400
    assert reason in response.get_json()["error"]
    assert "Traceback" not in caplog.text


def test_the_apps_own_callback_requests_pass(client):
    response = post_callback(client, ["data-content.children"], {"url.search": ""},
                             changed=("url.search",))
    assert response.status_code == 200
