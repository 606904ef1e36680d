"""Share links in Chromium: a link opens in a fresh browser, signed in as nobody,
showing its site alone whatever ``?site=`` says; a password link opens once its password
is given (a wrong one: ``test_share_routes``); an embed renders in an ``<iframe>`` of a
page served from another origin."""

from __future__ import annotations

import datetime as dt
import threading

import pytest
from browserkit import until
from dashkit import free_port, seed
from werkzeug.serving import make_server

from dashboard.services import get_services
from queries import shares
from queries.stats.sites import register

OTHER, SECRET = "other.example", "/secret-launch"
LOADED = "return document.body && document.body.dataset.loaded === '1';"
DRAWN = "return document.querySelectorAll('#share-history-graph .main-svg').length;"


@pytest.fixture
def link(app, frozen_clock):
    hour = frozen_clock.replace(minute=0, second=0, microsecond=0) - dt.timedelta(hours=1)
    db = get_services(app.server).db
    seed(db, "s", [(hour, "/a", 3)])
    seed(db, OTHER, [(hour, SECRET, 5)])
    register(db, OTHER, "admin")
    token, _ = shares.create(db, "s")
    return token


def test_a_share_link_opens_unsigned_showing_its_site_alone(app, link, dash_duo):
    dash_duo.start_server(app, navigate=False)
    dash_duo.driver.get(f"{dash_duo.server_url}/share/{link}?site={OTHER}&page={SECRET}")
    until(lambda: dash_duo.driver.execute_script(LOADED), msg="share page not loaded")
    assert dash_duo.driver.execute_script(DRAWN)
    assert dash_duo.find_element("#share-site").text == "s"
    assert dash_duo.find_element("#share-kpis").text.split("\n")[:2] == ["Hits (people)", "3"]
    source = dash_duo.driver.page_source
    assert OTHER not in source and SECRET not in source
    assert dash_duo.driver.get_cookies() == []
    assert dash_duo.get_logs() == []


def test_a_password_link_opens_once_its_password_is_given(app, link, dash_duo):
    locked, _ = shares.create(get_services(app.server).db, "s", password="a long password")
    dash_duo.start_server(app, navigate=False)
    dash_duo.driver.get(f"{dash_duo.server_url}/share/{locked}")
    assert "s" not in dash_duo.find_element("h1").text.split()
    box = dash_duo.find_element("#share-password")
    box.send_keys("a long password")
    dash_duo.find_element("#share-unlock button").click()
    until(lambda: dash_duo.driver.execute_script(LOADED), msg="unlocked page not loaded")
    assert dash_duo.find_element("#share-site").text == "s"
    assert dash_duo.driver.execute_script("return document.cookie") == ""      # HttpOnly
    assert dash_duo.get_logs() == []


def _outer_page(src: str):
    body = (f'<!doctype html><title>elsewhere</title><h1>A blog</h1>'
            f'<iframe id="embed" src="{src}" width="900" height="700"></iframe>').encode()

    def serve(_environ, start_response):
        start_response("200 OK", [("Content-Type", "text/html")])
        return [body]
    return serve


def test_an_embed_renders_in_an_iframe_on_another_origin(app, link, dash_duo):
    dash_duo.start_server(app, navigate=False)
    src = f"{dash_duo.server_url}/share/{link}?embed=true&theme=dark&background=transparent"
    port = free_port()
    outer = make_server("localhost", port, _outer_page(src), threaded=True)
    thread = threading.Thread(target=outer.serve_forever, daemon=True)
    thread.start()
    try:
        dash_duo.driver.get(f"http://localhost:{port}/")
        dash_duo.driver.switch_to.frame(dash_duo.find_element("#embed"))
        until(lambda: dash_duo.driver.execute_script(LOADED), msg="embed not loaded")
        assert dash_duo.driver.execute_script(DRAWN)
        assert dash_duo.find_element("#share-site").text == "s"
        assert not dash_duo.driver.find_elements("css selector", ".share-head")   # no nav
        dash_duo.driver.switch_to.default_content()
    finally:
        outer.shutdown()
        thread.join()
    assert dash_duo.get_logs() == []
