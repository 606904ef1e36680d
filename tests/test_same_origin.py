"""No cross-site writes: outside ``/hit`` a write must be JSON, and
when it says where it comes from (``Origin``, ``Sec-Fetch-Site``) it must come from this
server, or from ``HITBOARD_PUBLIC_URL``. A script's bearer token without those headers
passes; another site's page creates nothing, even in a signed-in browser."""

from __future__ import annotations

import json

import pytest
from dashkit import ADMIN_TOKEN, dashboard_app, post_callback, register_sites, signed_in

from dashboard.authority.origin import write_refusal
from dashboard.loadgen.control import get_generator
from dashboard.services import get_services
from queries import annotations as notes

HERE = "http://localhost"                 # the Flask test client's own origin
EVIL = "https://evil.example"
NOTE = json.dumps({"site": "s", "text": "deployed"})
BEARER = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


@pytest.fixture
def server(tmp_path):
    with dashboard_app(tmp_path / "store", rollup_interval=0,
                       public_url="https://stats.example.com") as app:
        register_sites(app, "blog")
        yield app.server
        get_generator(app.server).stop()


def stored(server) -> list:
    return notes.list_annotations(get_services(server).db)


def post_note(client, content_type="application/json", **headers):
    return client.post("/api/annotations", data=NOTE, content_type=content_type,
                       headers=headers)


def test_a_cross_site_text_plain_post_is_refused_and_creates_nothing(server):
    """What another site's page can send without a preflight, to a signed-in browser's
    server: a form or fetch posting JSON as text/plain."""
    browser = signed_in(server.test_client())
    for content_type in ("text/plain", "application/x-www-form-urlencoded",
                         "multipart/form-data; boundary=x", "application/json"):
        refused = post_note(browser, content_type, Origin=EVIL,
                            **{"Sec-Fetch-Site": "cross-site"})
        assert refused.status_code == 403, content_type
        assert "cross-site request refused" in refused.get_json()["error"]
    assert post_note(browser, "text/plain", Origin=EVIL).status_code == 403
    assert post_note(browser, **{"Sec-Fetch-Site": "same-site"}).status_code == 403
    assert post_note(browser, Origin="null").status_code == 403
    assert stored(server) == []


def test_the_same_origin_and_the_public_url_may_write(server):
    browser = signed_in(server.test_client())
    assert post_note(browser, Origin=HERE, **{"Sec-Fetch-Site": "same-origin"}).status_code \
        == 201
    # Behind a TLS proxy the request reaches the server as http://localhost, from a page
    # of the public address.
    assert post_note(browser, Origin="https://stats.example.com").status_code == 201
    assert post_note(browser, Origin="http://stats.example.com").status_code == 403
    assert len(stored(server)) == 2


def test_a_script_with_the_token_and_no_browser_headers_passes_if_it_sends_json(server):
    client = server.test_client()
    assert post_note(client, **BEARER).status_code == 201
    plain = post_note(client, "text/plain", **BEARER)
    assert plain.status_code == 415 and "application/json" in plain.get_json()["error"]
    assert client.post("/api/annotations", data=NOTE, headers=BEARER).status_code == 415
    assert len(stored(server)) == 1


def test_dash_callbacks_from_another_site_are_refused(server):
    """Even a callback that only reads: every POST to Dash that carries an Origin."""
    browser = signed_in(server.test_client())
    start = {"inputs": {"lg-start.n_clicks": 1, "lg-stop.n_clicks": None,
                        "lg-spike.n_clicks": None, "lg-backfill-confirm.n_clicks": None},
             "state": {"lg-rate.value": 50, "lg-sites.value": 1, "lg-pages.value": 3,
                       "lg-zipf.value": 1.1, "lg-options.value": [], "lg-days.value": 1},
             "changed": ("lg-start.n_clicks",)}
    outputs = ["lg-feedback.children", "lg-action.data"]
    assert post_callback(browser, outputs, headers={"Origin": EVIL}, **start).status_code \
        == 403
    reading = post_callback(browser, ["data-content.children"], {"url.search": "?site=s"},
                            headers={"Origin": EVIL})
    assert reading.status_code == 403
    assert not get_generator(server).status().running
    assert post_callback(browser, outputs, headers={"Origin": HERE}, **start).status_code \
        == 200
    assert get_generator(server).status().running


def test_the_beacon_and_reading_stay_open_to_every_origin(server):
    client = server.test_client()
    hit = client.post("/hit", data=json.dumps({"site": "blog", "page": "/"}),
                      content_type="text/plain", headers={"Origin": EVIL,
                                                          "Sec-Fetch-Site": "cross-site"})
    assert hit.status_code == 204
    assert client.get("/api/annotations", headers={"Origin": EVIL}).status_code == 200
    assert client.get("/healthz", headers={"Sec-Fetch-Site": "cross-site"}).status_code \
        in (200, 503)


class FakeRequest:
    def __init__(self, method="POST", path="/x", headers=(), mimetype="application/json",
                 scheme="http", host="127.0.0.1:8050"):
        self.method, self.path, self.mimetype = method, path, mimetype
        self.scheme, self.host, self.headers = scheme, host, dict(headers)


@pytest.mark.parametrize("request_, public, refused", [
    (FakeRequest(method="GET", headers={"Origin": EVIL}), None, None),
    (FakeRequest(method="OPTIONS", headers={"Origin": EVIL}), None, None),
    (FakeRequest(path="/hit", mimetype="text/plain", headers={"Origin": EVIL}), None, None),
    (FakeRequest(), None, None),
    (FakeRequest(headers={"Origin": "http://127.0.0.1:8050"}), None, None),
    (FakeRequest(headers={"Origin": "HTTP://127.0.0.1:8050"}), None, None),
    (FakeRequest(headers={"Origin": "http://127.0.0.1:8051"}), None, 403),
    (FakeRequest(headers={"Origin": "https://127.0.0.1:8050"}), None, 403),
    (FakeRequest(headers={"Origin": "https://stats.example.com"}),
     "https://stats.example.com/base", None),
    (FakeRequest(headers={"Sec-Fetch-Site": "none"}), None, None),
    (FakeRequest(headers={"Sec-Fetch-Site": "cross-site"}), None, 403),
    (FakeRequest(method="DELETE", mimetype=""), None, 415),
    (FakeRequest(method="PUT", mimetype="text/plain", headers={"Origin": EVIL}), None, 403),
])
def test_the_rule(request_, public, refused):
    found = write_refusal(request_, public)
    assert (found[0] if found else None) == refused
