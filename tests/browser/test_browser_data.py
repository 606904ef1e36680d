"""The Data page and the live page's recent-hits feed, in a real browser."""

from __future__ import annotations

import datetime as dt
import socket
import time
from urllib.parse import quote

import pytest
from browserkit import until
from dashkit import dashboard_app
from logkit import ingest

import queries
from dashboard.pages.live import feed
from queries.events.writer import EventWriter

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("frozen_clock")]


@pytest.fixture
def app(tmp_path):
    store = str(tmp_path / "store")
    db = queries.connect(store)
    queries.ensure_indexes(db)
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    for minutes in range(3):
        queries.log_hit(db, now - dt.timedelta(minutes=minutes), "site-1", "/index.html")
    writer = EventWriter(db, clock=lambda: now)
    for s in range(30):
        writer.add({"time": now - dt.timedelta(seconds=s), "site": "site-1", "host": "10.0.0.1",
                    "method": "GET", "path": "/index.html", "query": "", "status": 200,
                    "bytes": 1000 + s, "referrer": "", "user_agent": "test"})
    writer.flush()
    db.client.close()
    with dashboard_app(store) as app:
        yield app


def _ingest(store: str, log) -> None:
    """``log`` read into ``store`` as the site ``logs``, from where its last ingest stopped."""
    db = queries.connect(store)
    try:
        ingest(db, log, "logs")
    finally:
        db.client.close()


def test_data_page_shows_collections_plans_and_shard_advice(dash_duo, app):
    dash_duo.start_server(app, path="/data")
    dash_duo.wait_for_element("#data-collections")
    collections = dash_duo.find_element("#data-collections").text
    assert "stats.daily" in collections and "events" in collections
    assert "site_end" in collections and "Stored" in collections
    assert "pre-aggregated stats" in collections and "raw events" in collections
    plans = dash_duo.wait_for_element("#data-plans").text
    assert "Live · recent hits" in plans and "History · hits per day, 30 days" in plans
    # The embedded store explains like a server, with SQLite's plan under the index name.
    recent = next(line for line in plans.splitlines() if "recent hits" in line)
    assert "site_end" in recent and "USING INDEX" in plans
    advice = dash_duo.find_element("#data-shard-advice").text
    assert "Recommendation:" in advice
    assert "No log has been ingested into this store" in dash_duo.find_element(
        "#data-content").text
    assert dash_duo.get_logs() == []


def test_data_page_lists_the_logs_ingested_and_their_lines_not_read(dash_duo, tmp_path):
    store, log = str(tmp_path / "store"), tmp_path / "access.log"
    line = '10.0.0.1 - - [14/Mar/2026:10:00:00 +0000] "GET /p HTTP/1.1" 200 5 "-" "ua"\n'

    def ingest_more(good: int, junk: int) -> None:
        with log.open("a") as out:
            out.writelines([line] * good + ["junk\n"] * junk)
        _ingest(store, log)

    ingest_more(good=12, junk=2)
    with dashboard_app(store) as app:
        dash_duo.start_server(app, path="/data")
        dash_duo.wait_for_element("#data-logs tbody tr")
        assert cells(dash_duo)[:6] == [f"{log}\n{socket.gethostname()}", "no", "14", "12",
                                       "0", "2\n2 malformed"]
        ingest_more(good=3, junk=1)                   # the page shows it once reloaded
        dash_duo.driver.refresh()
        until(lambda: cells(dash_duo)[2:6] == ["18", "15", "0", "3\n3 malformed"])
        assert dash_duo.get_logs() == []


def cells(dash_duo) -> list[str]:
    """The first log row's cells."""
    return [td.text for td in dash_duo.find_elements("#data-logs tbody td")]


def test_live_page_shows_the_newest_hits(dash_duo, app):
    dash_duo.start_server(app)
    dash_duo.wait_for_element("#live-recent-table")
    dash_duo.wait_for_text_to_equal("#live-recent-table tbody tr:nth-child(1) td:nth-child(5)",
                                    "1,000")
    assert len(dash_duo.find_elements("#live-recent-table tbody tr")) == 20
    dash_duo.find_element("#live-recent-n label:nth-child(2)").click()
    dash_duo.wait_for_text_to_equal("#live-recent-table tbody tr:nth-child(30) td:nth-child(5)",
                                    "1,029")
    until(lambda: "recent=100" in dash_duo.driver.current_url)
    dash_duo.driver.refresh()                      # the rows chosen survive a reload
    dash_duo.wait_for_text_to_equal("#live-recent-table tbody tr:nth-child(30) td:nth-child(5)",
                                    "1,029")
    assert dash_duo.get_logs() == []


def test_live_page_draws_every_answer_of_a_server_slower_than_its_refresh(
        dash_duo, app, monkeypatch):
    """Each read takes longer than the 2 s refresh (a busy machine, a big store): Dash
    drops the answer of a callback asked again while it runs (plotly/dash#941), so the
    feed stayed empty forever; paced, every answer is drawn, late."""
    real = feed.newest_hits

    def slow(*args, **kwargs):
        time.sleep(2.5)                     # slower than the page's refresh
        return real(*args, **kwargs)

    monkeypatch.setattr(feed, "newest_hits", slow)
    dash_duo.start_server(app)
    dash_duo.wait_for_text_to_equal("#live-recent-table tbody tr:nth-child(1) td:nth-child(5)",
                                    "1,000")
    dash_duo.find_element("#live-recent-n label:nth-child(2)").click()
    dash_duo.wait_for_text_to_equal("#live-recent-table tbody tr:nth-child(30) td:nth-child(5)",
                                    "1,029")
    assert dash_duo.get_logs() == []


def test_data_page_lists_each_query_once_shows_all_advice_and_fits_a_phone(dash_duo, app):
    dash_duo.start_server(app, path="/data")
    plans = dash_duo.wait_for_element("#data-plans")
    charts = [cell.text for cell in plans.find_elements("css selector", "td[rowspan]")]
    assert charts.count("Live · totals") == 1          # two identical reads, one row
    assert "sent 2× per refresh" in plans.text
    advice = dash_duo.find_element("#data-shard-advice")
    assert len(advice.find_elements("css selector", "tbody tr")) == 4   # one per key
    clipped = dash_duo.driver.execute_script(
        "return [...arguments[0].querySelectorAll('*'), arguments[0]].filter("
        "e => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX != 'visible')"
        ".length", advice)
    assert clipped == 0                                 # nothing behind a scrollbar
    assert "Recommendation:" in advice.text
    dash_duo.driver.set_window_size(390, 900)
    dash_duo.wait_for_page(f"{dash_duo.server_url}/data")
    dash_duo.wait_for_element("#data-shard-advice")
    width = dash_duo.driver.execute_script(
        "return [document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1]                          # no sideways scrolling
    assert dash_duo.get_logs() == []


def test_data_page_tables_show_markup_as_text_and_name_columns_on_a_phone(dash_duo, app):
    """The tables are drawn from data (statictable.js): a page named like markup shows
    its characters, and on a phone each cell names its column."""
    db = queries.connect(app.server.extensions["hitboard"].settings.store)
    page = "/<img src=x onerror=alert(1)>"
    queries.log_hit(db, dt.datetime.now(dt.UTC), "site-1", page)
    db.client.close()
    dash_duo.driver.set_window_size(390, 900)
    dash_duo.start_server(app, path=f"/data?site=site-1&page={quote(page)}")
    plans = dash_duo.wait_for_element("#data-plans table")
    until(lambda: page in plans.text)
    assert not dash_duo.find_elements("#data-plans img")
    labels = dash_duo.driver.execute_script(
        "return [...document.querySelectorAll('#data-collections td')].map("
        "td => getComputedStyle(td, '::before').content)")
    assert labels[:2] == ['"Collection: "', '"Documents: "']
    assert dash_duo.get_logs() == []


SPLIT = """const cell = document.querySelector('#data-logs td');
const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
const split = [];
for (let text = walker.nextNode(); text; text = walker.nextNode()) {
    if (text.parentElement.closest('.hint')) { continue; }
    let start = 0;
    for (const part of text.textContent.split(/(?<=\\/)/)) {   // each name and its "/"
        const range = document.createRange();
        range.setStart(text, start);
        range.setEnd(text, start + part.length);
        const lines = new Set(Array.from(range.getClientRects()).filter(r => r.width > 0)
                              .map(r => Math.round(r.top)));
        if (lines.size > 1) { split.push(part); }
        start += part.length;
    }
}
return split;"""


@pytest.mark.parametrize("width", [1280, 390])
def test_a_log_files_name_is_never_split(dash_duo, tmp_path, width):
    """A long path wraps after a "/", never inside a name ("apache_combined" on one
    line, "_2015.log" on the next, at 390 px)."""
    folder = tmp_path / "var-log-archives-of-the-web-servers" / "frontends-eu-west"
    folder.mkdir(parents=True)
    store, log = str(tmp_path / "store"), folder / "apache_combined_2015-05-17.log"
    log.write_text('10.0.0.1 - - [14/Mar/2026:10:00:00 +0000] "GET /p HTTP/1.1" 200 5 '
                   '"-" "ua"\n')
    _ingest(store, log)
    with dashboard_app(store) as app:
        dash_duo.driver.set_window_size(width, 900)
        dash_duo.start_server(app, path="/data")
        dash_duo.wait_for_element("#data-logs tbody tr")
        assert dash_duo.driver.execute_script(SPLIT) == []
        assert dash_duo.get_logs() == []
