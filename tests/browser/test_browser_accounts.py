"""Accounts on ``hitboard serve`` (an admin and a viewer of one site): a fresh Chromium
lands on the sign-in page; the viewer signs in, lands where it was going and browses its
site, named in the top bar (a wrong password is the unit tests': Chromium logs its
401); its own browser's direct call of the load generator's
callback is refused, and another site's page is a 403."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from accountkit import PASSWORD, cheap_hashes  # noqa: F401
from browserkit import until
from dashkit import free_port, seed, utc
from hostilekit import timed_get

import queries
from queries import accounts

WAIT = 30.0
LOADGEN = ["lg-feedback.children", "lg-action.data"]
BUTTONS = ("lg-start", "lg-stop", "lg-spike", "lg-backfill-confirm")
# The load generator's Start, posted by the page's own script as Dash would.
POST_START = """
const [body, done] = arguments;
fetch("/_dash-update-component", {method: "POST", credentials: "same-origin",
  headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)})
  .then(async (r) => done([r.status, await r.text()]), (e) => done([0, String(e)]));
"""


@pytest.fixture
def served(tmp_path):
    store = tmp_path / "store"
    db = queries.connect(str(store))
    seed(db, "mine.example", [(utc(2026, 11, 21, 14), "/a", 3)])
    seed(db, "theirs.example", [(utc(2026, 11, 21, 14), "/secret", 5)])
    accounts.add_user(db, "root", "admin", PASSWORD)
    accounts.add_user(db, "ann", "viewer", PASSWORD, ["mine.example"])
    db.client.close()
    port, log = free_port(), tmp_path / "serve.log"
    env = {**os.environ, "HITBOARD_STORE": str(store), "HITBOARD_ROLLUP_INTERVAL": "0"}
    with log.open("wb") as out:
        process = subprocess.Popen([str(Path(sys.executable).parent / "hitboard"), "serve",
                                    "--port", str(port)], env=env, stdout=out,
                                   stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + WAIT
        while timed_get(port, "/healthz", 2) is None:
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}", log
    finally:
        process.send_signal(signal.SIGINT)    # gunicorn's quick shutdown: no draining
        process.wait(WAIT)
    assert "Traceback" not in log.read_text(), log.read_text()[-3000:]


def test_a_viewer_signs_in_browses_its_site_and_is_refused_the_rest(served, dash_duo):
    base, log = served
    assert "Every page asks for a name and password" in log.read_text()
    driver = dash_duo.driver
    driver.get(f"{base}/history?site=mine.example&tz=UTC")
    until(lambda: "/signin?next=" in driver.current_url, msg="not sent to sign in")
    assert driver.find_element("css selector", "h1").text == "Sign in to hitboard"
    driver.find_element("css selector", "#name").send_keys("ann")
    driver.find_element("css selector", "#password").send_keys(PASSWORD)
    driver.find_element("css selector", "#signin").click()
    until(lambda: driver.current_url.endswith("/history?site=mine.example&tz=UTC"),
          msg="not back where it was going")
    dash_duo.wait_for_contains_text(".account-who", "Signed in as ann", timeout=WAIT)
    dash_duo.wait_for_contains_text(".ctl-site", "mine.example", timeout=WAIT)
    assert "hitboard_session" not in driver.execute_script("return document.cookie")

    body = {"output": "..lg-feedback.children...lg-action.data..",
            "outputs": [{"id": "lg-feedback", "property": "children"},
                        {"id": "lg-action", "property": "data"}],
            "inputs": [{"id": b, "property": "n_clicks", "value": int(b == "lg-start")}
                       for b in BUTTONS],
            "state": [{"id": i, "property": "value", "value": v} for i, v in
                      (("lg-rate", 1), ("lg-sites", 1), ("lg-pages", 3), ("lg-zipf", 1.1),
                       ("lg-options", []), ("lg-days", 1))],
            "changedPropIds": ["lg-start.n_clicks"]}
    status, text = driver.execute_async_script(POST_START, body)
    assert status == 200 and "You may not drive the load generator" in text, text
    cookie = {c["name"]: c["value"] for c in driver.get_cookies()}["hitboard_session"]
    assert _status(f"{base}/history?site=theirs.example", cookie) == 403
    assert _status(f"{base}/history?site=mine.example", cookie) == 200
    assert dash_duo.get_logs() == []


def test_the_sign_in_page_wears_the_theme_of_the_page_it_leads_to(served, dash_duo):
    base, _ = served
    driver = dash_duo.driver
    for theme, background in (("dark", "rgb(20, 22, 26)"), ("light", "rgb(246, 247, 249)")):
        driver.get(f"{base}/sources?site=mine.example&theme={theme}")
        until(lambda: "/signin?next=" in driver.current_url, msg="not sent to sign in")
        assert driver.execute_script("return document.documentElement.dataset.theme") == theme
        assert driver.execute_script("return getComputedStyle(document.documentElement)"
                                     ".backgroundColor") == background
    assert dash_duo.get_logs() == []


def _status(url: str, cookie: str) -> int:
    request = urllib.request.Request(url, headers={"Cookie": f"hitboard_session={cookie}"})
    try:
        return urllib.request.urlopen(request, timeout=WAIT).status
    except urllib.error.HTTPError as exc:
        return exc.code
