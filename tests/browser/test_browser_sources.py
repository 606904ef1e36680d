"""The Sources page in Chromium: a site's log beside its beacon (figures per page and
day, the estimated blocked share), the range kept in the URL across a reload and the
back button, and what a one-sided site lacks."""

import datetime as dt

import pytest
from browserkit import until
from clockkit import TEST_NOW
from dashkit import seed
from logkit import ingest, write_log

from dashboard.ranges import PRESETS
from dashboard.services import get_services
from queries.events import apart
from queries.stats.sites import register

pytestmark = pytest.mark.usefixtures("frozen_clock")   # the same days at any hour

DAY = (TEST_NOW - dt.timedelta(days=3)).replace(hour=0, minute=0, second=0, microsecond=0)
HUMAN = "Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0"
GPTBOT = ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; "
          "+https://openai.com/gptbot)")
# Four people read /a (visitor 4 without the script: the beacon sees three), a crawler.
LOG = [(1, 600, "/a", HUMAN), (2, 610, "/a", HUMAN), (3, 620, "/a", HUMAN),
       (4, 630, "/a", HUMAN), (9, 640, "/a", GPTBOT)]
BEACON = [(1, 600, "/a"), (2, 610, "/a"), (3, 620, "/a")]


@pytest.fixture
def seeded(app, tmp_path):
    db = get_services(app.server).db
    register(db, "s", "admin")
    ingest(db, write_log(tmp_path / "access.log", DAY, LOG))
    writer = apart.writer(db)             # the beacon's hits: its log is counted
    for who, minute, page in BEACON:
        writer.add({"time": DAY + dt.timedelta(minutes=minute), "site": "s",
                    "host": f"203.0.113.{who}", "method": "POST", "path": page, "query": "",
                    "status": None, "bytes": 0, "referrer": None, "user_agent": HUMAN})
    writer.flush()
    return db


def _figures(dash_duo) -> dict[str, str]:
    """The six figures as text."""
    return {name: dash_duo.find_element(f"#sources-kpi-{name}").text
            for name in ("log", "beacon", "share", "bots", "ai", "noscript")}


def _read(dash_duo) -> None:
    expected = {"log": "4", "beacon": "3", "share": "25.0 %", "bots": "1", "ai": "1",
                "noscript": "1"}
    until(lambda: _figures(dash_duo) == expected,
          msg=lambda: f"figures: {_figures(dash_duo)}")
    dash_duo.wait_for_contains_text("#sources-table", "/a")
    dash_duo.wait_for_contains_text("#sources-summary", "s's counters count its log")


def _pick(dash_duo, value):
    dash_duo.find_element(f"#sources-range input[value='{value}']").find_element(
        "xpath", "ancestor::label").click()


def _checked(dash_duo) -> str:
    return dash_duo.find_element("#sources-range input:checked").get_attribute("value")


def test_the_log_beside_the_beacon_after_a_reload_and_the_back_button(app, seeded, dash_duo):
    dash_duo.start_server(app, path="/sources?site=s&tz=UTC&days=30")   # a link of before
    _read(dash_duo)
    until(lambda: _checked(dash_duo) == "30d")
    _pick(dash_duo, "7d")
    until(lambda: "days=" not in dash_duo.driver.current_url
          and "range=" not in dash_duo.driver.current_url)      # the site's opening range
    _read(dash_duo)
    dash_duo.driver.refresh()
    _read(dash_duo)
    _pick(dash_duo, "today")                                   # nothing
    until(lambda: "range=today" in dash_duo.driver.current_url)
    dash_duo.wait_for_contains_text("#sources-alert", "Neither a log nor the beacon")
    dash_duo.driver.back()
    until(lambda: "range=" not in dash_duo.driver.current_url)
    _read(dash_duo)
    assert _checked(dash_duo) == "7d"
    assert dash_duo.get_logs() == []


def test_a_site_whose_logs_are_from_2019_opens_on_them_and_takes_any_range(
        app, dash_duo, tmp_path):
    """Sources offered only Today, 7 and 30 days: a site whose logs are from 2019 showed
    nothing. It opens on all its days, as History does, and takes dates picked."""
    db = get_services(app.server).db
    old = dt.datetime(2019, 6, 3, tzinfo=dt.UTC)
    ingest(db, write_log(tmp_path / "2019.log", old, LOG), site="old")
    ingest(db, write_log(tmp_path / "2019-more.log", old + dt.timedelta(days=2),
                         [(5, 600, "/b", HUMAN)]), site="old")
    dash_duo.start_server(app, path="/sources?site=old&tz=UTC")
    until(lambda: _checked(dash_duo) == "all")
    dash_duo.wait_for_text_to_equal("#sources-kpi-log", "5")       # 4 people on /a, 1 on /b
    dash_duo.wait_for_contains_text("#sources-summary", "old's counters count its log")
    assert {o.get_attribute("value") for o in dash_duo.find_elements("#sources-range input")
            } == set(PRESETS)
    dates = dash_duo.find_elements(".page-sources .date-range input")
    assert [d.get_attribute("value") for d in dates] == ["2019-06-03", "2019-06-05"]
    dash_duo.driver.get(f"{dash_duo.server_url}/sources?site=old&tz=UTC&range=custom"
                        "&start=2019-06-03&end=2019-06-04")            # the first day
    dash_duo.wait_for_text_to_equal("#sources-kpi-log", "4")
    until(lambda: _checked(dash_duo) == "custom")
    dash_duo.driver.back()
    dash_duo.wait_for_text_to_equal("#sources-kpi-log", "5")
    assert dash_duo.get_logs() == []


def test_a_site_fed_by_the_load_generator_says_so(app, dash_duo):
    """Sources said "Nothing has fed shop.example yet" beside its hits."""
    from queries.events.writer import EventWriter
    from queries.stats.sites import register_synthetic

    db = get_services(app.server).db
    register_synthetic(db, ["shop.example"])
    writer = EventWriter(db)
    writer.add({"time": DAY, "site": "shop.example", "host": "192.0.2.1", "method": "GET",
                "path": "/a", "query": "", "status": 200, "bytes": 1, "referrer": "-",
                "user_agent": HUMAN})
    writer.flush()
    seed(db, "shop.example", [(DAY, "/a", 1)])
    dash_duo.start_server(app, path="/sources?site=shop.example&tz=UTC")
    dash_duo.wait_for_contains_text("#sources-summary",
                                    "shop.example is fed by the load generator")
    assert "Nothing has fed" not in dash_duo.find_element("#sources-summary").text
    assert dash_duo.get_logs() == []


def test_a_site_with_one_source_says_what_the_comparison_lacks(app, seeded, dash_duo):
    db = get_services(app.server).db
    db[apart.COLLECTION].delete_many({})
    dash_duo.start_server(app, path="/sources?site=s&tz=UTC")
    dash_duo.wait_for_contains_text("#sources-alert", "the tracking tag")
    dash_duo.wait_for_text_to_equal("#sources-kpi-share", "–")
    assert dash_duo.get_logs() == []


def test_the_shells_pages_narrow_every_figure_across_a_reload(app, seeded, dash_duo, tmp_path):
    ingest(seeded, write_log(tmp_path / "more.log", DAY, [(5, 700, "/b", HUMAN)]))
    dash_duo.start_server(app, path="/sources?site=s&tz=UTC&days=30&page=/b")
    expected = {"log": "1", "beacon": "0", "share": "–", "bots": "0", "ai": "0",
                "noscript": "1"}
    for _ in range(2):
        until(lambda: _figures(dash_duo) == expected,
              msg=lambda: f"figures: {_figures(dash_duo)}")
        dash_duo.wait_for_contains_text("#sources-summary", "Only /b, as chosen above")
        dash_duo.wait_for_contains_text("#shell-pages", "/b")
        assert "/a" not in dash_duo.find_element("#sources-table").text
        dash_duo.driver.refresh()
    assert dash_duo.get_logs() == []
