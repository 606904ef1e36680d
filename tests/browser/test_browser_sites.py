"""The Sites page in Chromium: a visitor reads the registry with its controls disabled
and why; signed in, a bad name is refused in words, a site is added and listed, its
zone and origins changed and still there after a reload, the back button returns to
the list showing them, and the site is removed; deleting its data waits for its name."""

from __future__ import annotations

from browserkit import click, until
from dashkit import register_sites, sign_in
from selenium.webdriver.common.keys import Keys

from dashboard.services import get_services
from queries.stats.sites import registered_sites, site_settings

NAME = "blog.example.com"


def _registered(app) -> list[str]:
    return [s.name for s in registered_sites(get_services(app.server).db)]


def _choose(dash_duo, selector: str, option: str) -> None:
    """Pick ``option`` in a dropdown: open it, type into its search box, Enter."""
    dash_duo.find_element(selector).click()
    until(lambda: "dash-dropdown-search" in (
        dash_duo.driver.switch_to.active_element.get_attribute("class") or ""))
    search = dash_duo.driver.switch_to.active_element
    search.send_keys(option)
    search.send_keys(Keys.ENTER)
    dash_duo.wait_for_text_to_equal(selector, option)


def _type(dash_duo, selector: str, text: str) -> None:
    box = dash_duo.find_element(selector)
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(Keys.DELETE)
    box.send_keys(text)


def _enabled(dash_duo, selector: str) -> bool:
    return dash_duo.find_element(selector).is_enabled()


def test_a_visitor_reads_the_registry_with_its_controls_disabled(app, dash_duo):
    register_sites(app, "existing.example")
    dash_duo.start_server(app, path="/sites?tz=UTC")
    dash_duo.wait_for_contains_text(".page-sites", "Sign in to manage sites")
    dash_duo.wait_for_contains_text("#sites-list", "existing.example")
    dash_duo.wait_for_contains_text("#sites-count", "1 site registered")
    assert not _enabled(dash_duo, "#sites-add") and not _enabled(dash_duo, "#sites-add-name")
    click(dash_duo, "#sites-list a.site-name")
    dash_duo.wait_for_text_to_equal("#sites-title", "existing.example")
    for control in ("#sites-save", "#sites-unregister", "#sites-confirm", "#sites-delete"):
        assert not _enabled(dash_duo, control), control
    assert dash_duo.get_logs() == []


def test_add_change_reload_go_back_and_remove_a_site(app, dash_duo):
    dash_duo.start_server(app, navigate=False)
    sign_in(dash_duo, "/sites?tz=UTC")
    until(lambda: _enabled(dash_duo, "#sites-add"), msg="not signed in")
    dash_duo.wait_for_contains_text("#sites-count", "No site is registered yet")

    _type(dash_duo, "#sites-add-name", "not a name!")
    dash_duo.find_element("#sites-add").click()
    dash_duo.wait_for_contains_text("#sites-add-status", "invalid site 'not a name!'")
    assert _registered(app) == []

    _type(dash_duo, "#sites-add-name", NAME)
    _type(dash_duo, "#sites-add-origins", "https://blog.example.com")
    dash_duo.find_element("#sites-add").click()
    dash_duo.wait_for_contains_text("#sites-add-status", f"Registered {NAME}")
    dash_duo.wait_for_contains_text("#sites-list", "https://blog.example.com")
    assert dash_duo.find_element("#sites-add-name").get_attribute("value") == ""

    click(dash_duo, "#sites-list a.site-name")
    dash_duo.wait_for_text_to_equal("#sites-title", NAME)
    assert f"edit={NAME}" in dash_duo.driver.current_url
    assert f'data-site="{NAME}"' in dash_duo.find_element("#sites-tag").text
    _choose(dash_duo, "#sites-tz", "Asia/Tokyo")
    _type(dash_duo, "#sites-origins", "https://blog.example.com\nhttps://www.blog.example.com")
    dash_duo.find_element("#sites-agents input[value='bot']").find_element(
        "xpath", "ancestor::label").click()
    dash_duo.find_element("#sites-source input[value='beacon']").find_element(
        "xpath", "ancestor::label").click()
    dash_duo.find_element("#sites-save").click()
    dash_duo.wait_for_contains_text("#sites-save-status", "Saved. Time zone Asia/Tokyo")

    dash_duo.driver.refresh()
    dash_duo.wait_for_text_to_equal("#sites-title", NAME)
    dash_duo.wait_for_text_to_equal("#sites-tz", "Asia/Tokyo")
    assert dash_duo.find_element("#sites-origins").get_attribute("value") == (
        "https://blog.example.com\nhttps://www.blog.example.com")
    assert dash_duo.find_element("#sites-agents input[value='bot']").is_selected()
    assert dash_duo.find_element("#sites-source input[value='beacon']").is_selected()
    assert site_settings(get_services(app.server).db, NAME).primary_source == "beacon"

    dash_duo.driver.back()                                      # to the list
    dash_duo.wait_for_contains_text("#sites-list", "https://www.blog.example.com")
    dash_duo.wait_for_contains_text("#sites-list", "Asia/Tokyo")
    assert "edit=" not in dash_duo.driver.current_url
    assert not dash_duo.find_element("#sites-editing").is_displayed()

    click(dash_duo, "#sites-list a.site-name")
    dash_duo.wait_for_text_to_equal("#sites-title", NAME)
    assert not _enabled(dash_duo, "#sites-delete")             # until the name is typed
    _type(dash_duo, "#sites-confirm", "blog")
    assert not _enabled(dash_duo, "#sites-delete")
    dash_duo.find_element("#sites-unregister").click()
    dash_duo.wait_for_contains_text("#sites-edit-status", f"Unregistered {NAME}")
    until(lambda: not dash_duo.find_element("#sites-save").is_displayed())
    assert _registered(app) == []
    dash_duo.find_element("#sites-edit-status a").click()        # "All sites"
    dash_duo.wait_for_contains_text("#sites-count", "No site is registered yet")
    assert dash_duo.get_logs() == []


def test_deleting_a_site_and_its_data_once_its_name_is_typed(app, dash_duo):
    register_sites(app, "gone.example")
    dash_duo.start_server(app, navigate=False)
    sign_in(dash_duo, "/sites?tz=UTC&edit=gone.example")
    dash_duo.wait_for_text_to_equal("#sites-title", "gone.example")
    until(lambda: _enabled(dash_duo, "#sites-confirm"), msg="not signed in")
    _type(dash_duo, "#sites-confirm", "gone.example")
    until(lambda: _enabled(dash_duo, "#sites-delete"))
    dash_duo.find_element("#sites-delete").click()
    dash_duo.wait_for_contains_text("#sites-edit-status", "Deleted gone.example")
    assert _registered(app) == []
    assert not site_settings(get_services(app.server).db, "gone.example").registered
    assert dash_duo.get_logs() == []
