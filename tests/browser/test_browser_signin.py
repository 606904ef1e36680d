"""Signing in and out in Chromium: a visitor sees the load generator's controls disabled
and why; the top bar's Sign in takes the secret (a wrong one says so), the page reloads
with the controls enabled, Sign out closes them again; the sign-in link leaves a clean
URL and a cookie no script can read."""

from __future__ import annotations

from browserkit import until
from dashkit import ADMIN_TOKEN, sign_in
from selenium.webdriver.common.keys import Keys

from dashboard.loadgen.control import get_generator

STATE = "const e = document.getElementById('account'); return e ? e.dataset.state : null;"


def account(dash_duo) -> str:
    return dash_duo.driver.execute_script(STATE)


def enabled(dash_duo, selector) -> bool:
    return dash_duo.find_element(selector).is_enabled()


def test_a_visitor_signs_in_from_the_top_bar_acts_and_signs_out(app, dash_duo):
    dash_duo.start_server(app, path="/loadgen")
    dash_duo.wait_for_contains_text(".page-loadgen", "Sign in to drive the load generator")
    assert account(dash_duo) == "visitor"
    assert not enabled(dash_duo, "#lg-start") and not enabled(dash_duo, "#lg-backfill")

    dash_duo.find_element("#account-signin-box summary").click()
    dash_duo.find_element("#account-secret").send_keys("a-guess")
    dash_duo.find_element("#account-signin").click()
    dash_duo.wait_for_contains_text("#account-status", "not this server's admin secret")
    box = dash_duo.find_element("#account-secret")
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(ADMIN_TOKEN, Keys.ENTER)
    until(lambda: account(dash_duo) == "admin", msg="not signed in")
    dash_duo.wait_for_text_to_equal("#lg-state", "Stopped")
    assert "hitboard_session" not in dash_duo.driver.execute_script("return document.cookie")
    assert "Sign in to" not in dash_duo.find_element(".page-loadgen").text
    dash_duo.find_element("#lg-start").click()
    dash_duo.wait_for_contains_text("#lg-state", "Running on")
    dash_duo.find_element("#lg-stop").click()
    dash_duo.wait_for_text_to_equal("#lg-state", "Stopped")

    dash_duo.find_element("#account-signout").click()
    until(lambda: account(dash_duo) == "visitor", msg="not signed out")
    dash_duo.wait_for_contains_text(".page-loadgen", "Sign in to drive the load generator")
    assert not enabled(dash_duo, "#lg-start")
    assert not get_generator(app.server).status().running
    assert dash_duo.get_logs() == []


def test_the_sign_in_link_leaves_a_clean_url(app, dash_duo):
    dash_duo.start_server(app, navigate=False)
    sign_in(dash_duo, "/rollups?tz=UTC")
    until(lambda: account(dash_duo) == "admin", msg="not signed in")
    url = dash_duo.driver.current_url
    assert ADMIN_TOKEN not in url and "/rollups" in url
    assert enabled(dash_duo, "#rollups-run")
    assert dash_duo.get_logs() == []


def test_the_link_lands_on_the_page_it_was_opened_from(app, dash_duo):
    """Signing in landed on Live: the link opened without next= (as printed) lands on
    the page the browser showed, its view whole."""
    from dashkit import signin_code

    page = "/history?site=s&tz=UTC&range=30d&compare=1&vs=yoy"
    dash_duo.start_server(app, path=page)
    dash_duo.wait_for_element("#history-graph")
    code = signin_code(dash_duo.server._current)
    dash_duo.driver.get(f"{dash_duo.server_url}/signin?code={code}")
    until(lambda: account(dash_duo) == "admin", msg="not signed in")
    url = dash_duo.driver.current_url
    assert url == dash_duo.server_url + page, url
    assert dash_duo.get_logs() == []


def test_the_printed_link_pasted_in_the_top_bar_signs_in_where_one_is(app, dash_duo):
    from dashkit import signin_code

    page = "/rollups?tz=UTC"
    dash_duo.start_server(app, path=page)
    assert not enabled(dash_duo, "#rollups-run")
    dash_duo.find_element("#account-signin-box summary").click()
    link = f"http://127.0.0.1:8050/signin?code={signin_code(dash_duo.server._current)}"
    dash_duo.find_element("#account-secret").send_keys(link, Keys.ENTER)
    until(lambda: account(dash_duo) == "admin", msg="not signed in")
    until(lambda: enabled(dash_duo, "#rollups-run"))
    assert dash_duo.driver.current_url == dash_duo.server_url + page
    assert dash_duo.get_logs() == []
