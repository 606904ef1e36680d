"""The /hit beacon and /hit.js from a page of another origin, in a real browser.

The dashboard runs on ``localhost:P``; the "website" is a tiny HTTP server on
``127.0.0.1:Q`` (another origin), allowed by ``beacon_sites``. Every way a site sends a
hit must be counted exactly once; an origin the policy does not list must be refused.
"""

from __future__ import annotations

import datetime as dt
import http.server
import threading

import pytest
from browserkit import until
from dashkit import counted, dashboard_app, free_port
from fakes import stored_events

import queries
from dashboard.services import get_services
from queries.events import custom

pytestmark = [pytest.mark.browser,
              pytest.mark.usefixtures("frozen_clock")]   # the same hours at any hour
WAYS = ("/beacon-string", "/beacon-blob", "/fetch-json", "/fetch-keepalive", "/img")

SENDER = """<!doctype html><title>sender</title><p id="out"></p><script>
const hit = "%(dashboard)s/hit", out = document.getElementById("out");
const body = page => JSON.stringify({site: "blog", page: page});
const note = text => { out.textContent += text + " "; };
note("string:" + navigator.sendBeacon(hit, body("/beacon-string")));
note("blob:" + navigator.sendBeacon(hit, new Blob([body("/beacon-blob")],
                                                  {type: "application/json"})));
fetch(hit, {method: "POST", headers: {"Content-Type": "application/json"},
            body: body("/fetch-json")}).then(r => note("json:" + r.status));
fetch(hit, {method: "POST", keepalive: true, headers: {"Content-Type": "application/json"},
            body: body("/fetch-keepalive")}).then(r => note("keepalive:" + r.status));
const img = new Image();
img.onload = () => note("img:loaded");
img.src = hit + "?site=blog&page=/img";
</script>"""

START = """<!doctype html><title>start</title><a id="go" href="/article/1">read</a>"""
ARTICLE = """<!doctype html><title>article</title><script>%(before)s</script>
<script defer src="%(dashboard)s/hit.js" data-site="blog"></script><p id="out">article</p>"""
SPA = """<!doctype html><title>app</title>
<script defer src="%(dashboard)s/hit.js" data-site="blog" %(attrs)s></script><p id="out">app</p>"""
SHOP = """<!doctype html><title>shop</title><script>
window.hitboard = window.hitboard || function () {
  (window.hitboard.q = window.hitboard.q || []).push(arguments) };
hitboard("Queued", {props: {early: "yes"}});
</script>
<script defer src="%(dashboard)s/hit.js" data-site="blog" data-outbound="true"
        data-downloads="true"></script>
<a id="away" href="https://elsewhere.example/page">away</a>
<a id="file" href="/files/report.pdf">report</a>
<a id="inside" href="/shop/help">help</a>
<button id="buy" data-hitboard-event="Purchase" data-hitboard-event-plan="pro">buy</button>
<p id="out">shop</p>
<script>   // the links stay on this page: the test reads what they sent
for (const a of document.querySelectorAll("a"))
  a.addEventListener("click", e => e.preventDefault());
</script>"""
SPY = """window.calls = 0; navigator.sendBeacon = () => { window.calls++; return true; };"""
DNT = """Object.defineProperty(navigator, "doNotTrack", {value: "1"});"""
PRERENDERING = """Object.defineProperty(document, "prerendering",
                                         {value: true, configurable: true});"""
SHOWN = """Object.defineProperty(document, "prerendering", {value: false});
document.dispatchEvent(new Event("prerenderingchange"));"""


class Site:
    """A website on its own loopback port serving the pages above."""

    def __init__(self, port: int, dashboard: str):
        pages = {"/sender": SENDER % {"dashboard": dashboard}, "/start": START,
                 "/article/1": ARTICLE % {"dashboard": dashboard, "before": ""},
                 "/spied": ARTICLE % {"dashboard": dashboard, "before": SPY},
                 "/dnt": ARTICLE % {"dashboard": dashboard, "before": SPY + DNT},
                 "/prerendered": ARTICLE % {"dashboard": dashboard,
                                            "before": SPY + PRERENDERING},
                 "/app": SPA % {"dashboard": dashboard, "attrs": ""},
                 "/shop": SHOP % {"dashboard": dashboard},
                 "/hashed": SPA % {"dashboard": dashboard, "attrs": 'data-hash="true"'}}

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path == "/favicon.ico":
                    self.send_response(204)
                    self.end_headers()
                    return
                page = pages.get(self.path)
                self.send_response(200 if page else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.end_headers()
                self.wfile.write((page or "not found").encode())

            def log_message(self, *_args):
                pass

        self.origin = f"http://127.0.0.1:{port}"
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def site_port():
    return free_port()


@pytest.fixture
def app(tmp_path, site_port):
    sites = f"blog=http://127.0.0.1:{site_port}"
    with dashboard_app(tmp_path / "store", rollup_interval=0, beacon_sites=sites) as app:
        yield app


@pytest.fixture
def site(dash_duo, app, site_port):
    dash_duo.start_server(app, navigate=False)
    site = Site(site_port, dash_duo.server_url)
    yield site
    site.close()


def counts(app) -> dict:
    services = counted(app)
    now = dt.datetime.now(dt.UTC)
    frame = queries.top_pages(services.db, "blog", now - dt.timedelta(hours=1),
                              now + dt.timedelta(hours=1))
    return frame["hits"].to_dict()


def test_every_way_of_sending_counts_once_from_another_origin(dash_duo, app, site):
    dash_duo.driver.get(f"{site.origin}/sender")
    until(lambda: len(counts(app)) == len(WAYS))
    assert counts(app) == dict.fromkeys(WAYS, 1)
    out = dash_duo.find_element("#out")
    until(lambda: out.text.count(":") == 5)
    assert set(out.text.split()) == {"string:true", "blob:true", "json:204", "keepalive:204",
                                     "img:loaded"}
    assert dash_duo.get_logs() == []


def test_hit_js_sends_path_and_referrer_once_and_respects_dnt(dash_duo, app, site):
    dash_duo.driver.get(f"{site.origin}/spied")
    until(lambda: dash_duo.driver.execute_script("return window.calls") == 1)
    dash_duo.driver.get(f"{site.origin}/dnt")
    dash_duo.wait_for_text_to_equal("#out", "article")
    assert dash_duo.driver.execute_script("return window.calls") == 0   # Do-Not-Track: none
    dash_duo.driver.get(f"{site.origin}/start")
    dash_duo.find_element("#go").click()
    until(lambda: counts(app) == {"/article/1": 1})
    services = counted(app)
    (event,) = [e for e in stored_events(services.db) if e["path"] == "/article/1"]
    assert event["referrer"] == f"{site.origin}/start"
    cookies = dash_duo.driver.execute_script("return document.cookie")
    assert cookies == "" and dash_duo.driver.get_cookies() == []
    assert dash_duo.get_logs() == []


def test_hit_js_counts_each_route_of_a_single_page_app_once(dash_duo, app, site):
    """pushState, replaceState, back and forward each count the page they lead to,
    once in a row (a query or the same path again counts nothing); the previous route is
    the referrer, as a link's page would be."""
    dash_duo.driver.get(f"{site.origin}/app")
    until(lambda: counts(app) == {"/app": 1})
    dash_duo.driver.execute_script("""
        history.pushState({}, "", "/app/a");
        history.pushState({}, "", "/app/b");
        history.pushState({}, "", "/app/b?tab=2");
        history.replaceState({}, "", "/app/c");""")
    until(lambda: counts(app) == {"/app": 1, "/app/a": 1, "/app/b": 1, "/app/c": 1})
    # The page's own back and forward (Chromium's back button skips entries a page added
    # without a user's gesture).
    dash_duo.driver.execute_script("history.back();")           # to /app/b
    until(lambda: counts(app).get("/app/b") == 2)
    dash_duo.driver.execute_script("history.forward();")        # to /app/c
    until(lambda: counts(app).get("/app/c") == 2)
    dash_duo.driver.get(f"{site.origin}/hashed")
    dash_duo.driver.execute_script('location.hash = "#/settings";')
    until(lambda: counts(app).get("/hashed#/settings") == 1)
    assert counts(app) == {"/app": 1, "/app/a": 1, "/app/b": 2, "/app/c": 2, "/hashed": 1,
                           "/hashed#/settings": 1}
    services = counted(app)
    referrers = {e["path"]: e["referrer"] for e in stored_events(services.db)
                 if e["path"] in ("/app/a", "/app/c")}
    assert referrers["/app/c"] == f"{site.origin}/app/b"
    assert dash_duo.get_logs() == []


def test_a_prerendered_page_counts_once_it_is_shown(dash_duo, app, site):
    dash_duo.driver.get(f"{site.origin}/prerendered")
    dash_duo.wait_for_text_to_equal("#out", "article")
    assert dash_duo.driver.execute_script("return window.calls") == 0
    dash_duo.driver.execute_script(SHOWN)
    until(lambda: dash_duo.driver.execute_script("return window.calls") == 1)
    dash_duo.driver.execute_script(SHOWN.splitlines()[1])     # shown again: no new view
    assert dash_duo.driver.execute_script("return window.calls") == 1
    assert dash_duo.get_logs() == []


def custom_events(app) -> list[tuple]:
    """What the beacon kept of the custom events and engagements: (name or
    "engagement", page, props, revenue)."""
    db = counted(app).db
    return sorted((doc.get("name") or "engagement", doc["page"], dict(doc.get("props") or []),
                   doc.get("revenue")) for doc in db[custom.COLLECTION].find())


def test_hit_js_sends_routes_clicks_and_custom_events_each_once(dash_duo, app, site):
    """From another origin: three pushState routes, a call queued before the script
    loaded, a declared event, an outbound link, a download, a call made later; then the
    page is left and its visible time sent."""
    dash_duo.driver.get(f"{site.origin}/shop")
    until(lambda: counts(app) == {"/shop": 1})
    dash_duo.driver.execute_script("""
        history.pushState({}, "", "/shop/a");
        history.pushState({}, "", "/shop/b");
        history.pushState({}, "", "/shop/c");""")
    for button in ("#buy", "#away", "#file", "#inside"):
        dash_duo.find_element(button).click()
    dash_duo.driver.execute_script("""hitboard("Signup", {props: {plan: "pro"},
        revenue: {currency: "EUR", amount: "49.00"}});""")
    expected = [
        ("File Download", "/shop/c", {"url": f"{site.origin}/files/report.pdf"}, None),
        ("Outbound Link: Click", "/shop/c", {"url": "https://elsewhere.example/page"}, None),
        ("Purchase", "/shop/c", {"plan": "pro"}, None),
        ("Queued", "/shop", {"early": "yes"}, None),
        ("Signup", "/shop/c", {"plan": "pro"}, ["EUR", "49.00"])]
    until(lambda: [e for e in custom_events(app) if e[0] != "engagement"] == expected,
          msg=lambda: f"custom events: {custom_events(app)}")
    assert counts(app) == {"/shop": 1, "/shop/a": 1, "/shop/b": 1, "/shop/c": 1}
    dash_duo.driver.get(f"{site.origin}/start")         # leaving sends the visible time
    until(lambda: ("/shop/c" in {e[1] for e in custom_events(app) if e[0] == "engagement"}),
          msg=lambda: f"engagements: {custom_events(app)}")
    engaged = [doc["engaged"] for doc in get_services(app.server).db[custom.COLLECTION].find(
        {"page": "/shop/c", "engaged": {"$exists": True}})]
    assert engaged and all(ms > 0 for ms in engaged)
    assert [e for e in custom_events(app) if e[0] != "engagement"] == expected   # once each
    assert dash_duo.get_logs() == []


def test_a_page_restored_from_the_back_forward_cache_counts_no_second_view(dash_duo, app,
                                                                          site):
    dash_duo.driver.get(f"{site.origin}/shop")
    until(lambda: counts(app) == {"/shop": 1})
    dash_duo.driver.execute_script(
        "window.addEventListener('pageshow', e => { window.restored = e.persisted; });")
    dash_duo.driver.get(f"{site.origin}/start")
    dash_duo.driver.back()
    dash_duo.wait_for_text_to_equal("#out", "shop")
    if not dash_duo.driver.execute_script("return window.restored === true"):
        pytest.skip("this Chromium did not restore the page from its back-forward cache")
    dash_duo.driver.forward()
    dash_duo.driver.back()
    until(lambda: dash_duo.driver.execute_script("return window.restored") is True)
    dash_duo.driver.execute_script('hitboard("Restored");')    # sent after any view would be
    until(lambda: "Restored" in {e[0] for e in custom_events(app)})
    assert counts(app) == {"/shop": 1}                  # the script did not run again
    assert dash_duo.get_logs() == []
