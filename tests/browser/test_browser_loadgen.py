"""The load generator page in Chromium, signed in: start moves the live KPIs, stop stops
them, and a reload shows the server's generator as it is."""

from browserkit import until
from dashkit import sign_in
from selenium.webdriver.common.keys import Keys

SENT = """
const e = document.getElementById('lg-kpi-sent');
return e ? e.textContent : '';
"""


# The callback requests the page has made (the KPI refresh is the only one while idle).
REQUESTS = """
return performance.getEntriesByType('resource')
    .filter(e => new URL(e.name).pathname.endsWith('/_dash-update-component')).length;
"""


def _requests(dash_duo) -> int:
    return dash_duo.driver.execute_script(REQUESTS)


def _sent(dash_duo) -> int:
    # One script call: the KPI cards are re-rendered every second, so a located element
    # may go stale before its text is read.
    text = dash_duo.driver.execute_script(SENT).replace(",", "")
    return int(text) if text.isdigit() else 0


def _moves_past(dash_duo, count: int) -> None:
    until(lambda: _sent(dash_duo) > count,
          msg=f"hits sent did not move past {count}")


def _set(dash_duo, selector, value) -> None:
    box = dash_duo.find_element(selector)
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(str(value), Keys.TAB)


def test_start_stop_and_reload_show_the_servers_generator(app, dash_duo):
    dash_duo.start_server(app, navigate=False)
    sign_in(dash_duo, "/loadgen")
    dash_duo.wait_for_text_to_equal("#lg-state", "Stopped")
    _set(dash_duo, "#lg-rate", 200)
    _set(dash_duo, "#lg-pages", 5)
    dash_duo.find_element("#lg-start").click()
    dash_duo.wait_for_contains_text("#lg-state", "Running on shop.example, blog.example")
    _moves_past(dash_duo, 0)
    first = _sent(dash_duo)
    _moves_past(dash_duo, first)

    dash_duo.driver.refresh()
    dash_duo.wait_for_contains_text("#lg-state", "Running on shop.example")
    assert dash_duo.find_element("#lg-rate").get_attribute("value") == "200"
    assert dash_duo.find_element("#lg-pages").get_attribute("value") == "5"
    _moves_past(dash_duo, first)

    dash_duo.find_element("#lg-stop").click()
    dash_duo.wait_for_text_to_equal("#lg-state", "Stopped")
    dash_duo.wait_for_text_to_equal("#lg-kpi-achieved", "0")
    dash_duo.wait_for_contains_text("#lg-feedback", "Stopped.")
    stopped, requests = _sent(dash_duo), _requests(dash_duo)
    until(lambda: _requests(dash_duo) >= requests + 2,
          msg="the page stopped refreshing")
    assert _sent(dash_duo) == stopped           # two refreshes later the count has not moved

    dash_duo.find_element("#lg-spike").click()
    dash_duo.wait_for_contains_text("#lg-feedback", "start the generator")
    assert dash_duo.get_logs() == []


FITS = """
const box = document.getElementById(arguments[0]);
return box.scrollWidth <= box.clientWidth;
"""


def test_fields_fit_the_kpi_says_flat_and_backfill_asks_first(app, dash_duo):
    from dashboard.loadgen.control import get_generator

    dash_duo.start_server(app, navigate=False)
    sign_in(dash_duo, "/loadgen")
    dash_duo.wait_for_text_to_equal("#lg-state", "Stopped")
    for field, value in (("lg-rate", 20000), ("lg-sites", 10), ("lg-pages", 1000),
                         ("lg-days", 400), ("lg-zipf", 4.5)):
        _set(dash_duo, f"#{field}", value)
        assert dash_duo.driver.execute_script(FITS, field), field     # "20(" no more
    _set(dash_duo, "#lg-rate", 20)
    _set(dash_duo, "#lg-sites", 1)
    _set(dash_duo, "#lg-pages", 3)
    _set(dash_duo, "#lg-days", 1)
    dash_duo.find_element("#lg-options input[value='diurnal']").click()     # untick
    dash_duo.find_element("#lg-start").click()
    dash_duo.wait_for_contains_text("#lg-kpis", "rate 20, flat")
    assert "daily cycle" not in dash_duo.find_element("#lg-kpis").text
    dash_duo.find_element("#lg-stop").click()
    dash_duo.wait_for_text_to_equal("#lg-state", "Stopped")

    generator = get_generator(app.server)
    dash_duo.find_element("#lg-backfill").click()
    dash_duo.wait_for_contains_text("#lg-confirm-text", "Backfill will add about")
    text = dash_duo.find_element("#lg-confirm-text").text
    assert "1 day and today so far, for 1 site (shop.example) of 3 pages" in text
    hits = int(text.split("about ")[1].split(" hits")[0].replace(",", ""))
    assert 20 * 86_400 <= hits <= 2 * 20 * 86_400
    dash_duo.find_element("#lg-backfill-cancel").click()
    until(lambda: not dash_duo.find_element("#lg-confirm").is_displayed())
    assert generator.status().backfill.total == 0          # nothing written
    dash_duo.find_element("#lg-backfill").click()
    dash_duo.wait_for_contains_text("#lg-confirm-text", "Write it?")
    dash_duo.find_element("#lg-backfill-confirm").click()
    dash_duo.wait_for_contains_text("#lg-backfill-state", "Backfilled 1 day:")
    assert not dash_duo.find_element("#lg-confirm").is_displayed()
    assert dash_duo.get_logs() == []
