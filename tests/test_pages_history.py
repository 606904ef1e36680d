"""dashboard/pages/history/page.py and history_view.py: the historical page as plain functions."""

import datetime as dt
import io

import pandas as pd
import pytest
import time_machine
from dash import no_update
from dashkit import noon_hits, page_module, seed

from dashboard.pages.history.view import compute_view
from dashboard.services import get_services

TOKYO = "Asia/Tokyo"
TOKYO_ZONE = dt.timezone(dt.timedelta(hours=9))
# Instants of a Tokyo day: just after midnight, after noon (when the seeded hits are),
# in its last minute.
INSTANTS = {"00:48": dt.datetime(2026, 11, 25, 0, 48, tzinfo=TOKYO_ZONE),
            "13:00": dt.datetime(2026, 11, 25, 13, 0, tzinfo=TOKYO_ZONE),
            "23:59": dt.datetime(2026, 11, 25, 23, 59, tzinfo=TOKYO_ZONE)}
UNCHANGED = dict.fromkeys(("search", "start_date", "end_date", "preset"), no_update)


@pytest.fixture
def history(app):
    return page_module("history")


@pytest.fixture(params=INSTANTS, autouse=True)
def now(request):
    """Every test at each instant of ``INSTANTS``: the clock is frozen there."""
    with time_machine.travel(INSTANTS[request.param], tick=False):
        yield INSTANTS[request.param]


@pytest.fixture
def seeded(app, now):
    """Hits at local noon in Tokyo 1..9 days ago, 10·k hits k days ago, on two pages."""
    hits = noon_hits(TOKYO_ZONE, now.date(), days=9)
    seed(get_services(app.server).db, "s", hits)
    return hits


def totals(table):
    return {row.children[0].children[-1]: row.children[1].children
            for row in table.children[1].children}


def test_seven_days_in_tokyo_count_the_last_six_full_days(history, seeded):
    out = history.render(f"?site=s&tz={TOKYO}&range=7d")
    figure, table, label, hint, alert = (out[k] for k in ("figure", "totals", "period", "hint",
                                                          "alert"))
    assert alert is None
    assert totals(table) == {"Humans": f"{11 * sum(range(1, 7)):,}"}
    assert "per hour" in label and TOKYO in label
    assert hint == "Click an hour to see its minutes."
    assert sum(figure.data[0].y) == 11 * sum(range(1, 7))


def test_pages_compare_and_stacked_mode(history, seeded, now):
    """7 days so far (6 whole days and today until now) against the 7 days before until
    the same time: the day 7 days ago counts only once its noon is past."""
    search = f"?site=s&page=/a&page=/b&tz={TOKYO}&range=7d&compare=1&mode=stacked&gran=day"
    out = history.render(search)
    figure, table, hint = out["figure"], out["totals"], out["hint"]
    assert [t.name for t in figure.data] == ["/a", "/b", "All pages"]
    assert figure.data[2].legendgrouptitle.text == "Previous period"
    assert figure.data[0].stackgroup == "current"
    assert hint == "Click a day to see its hours."
    rows = table.children[1].children
    a_row = [cell.children for cell in rows[0].children[1:]]
    before = 10 * sum(range(7 if now.hour >= 12 else 8, 10))
    change = (10 * sum(range(1, 7)) - before) / before * 100
    assert a_row == [f"{10 * sum(range(1, 7)):,}", f"{before:,}",
                     f"{change:+.1f} %".replace("-", "−")]


def test_csv_is_the_plotted_series(history, seeded):
    search = f"?site=s&page=/a&tz={TOKYO}&range=7d&gran=day&compare=1"
    out = history.render(search)
    figure, plotted = out["figure"], out["plotted"]
    data, alert = history.download(1, plotted)
    assert alert is None
    assert data["filename"].startswith("hitboard-s-day-")
    csv = pd.read_csv(io.StringIO(data["content"]))
    assert list(csv.columns) == ["time", "/a", "previous time", "previous /a"]
    assert csv["/a"].sum() == 10 * sum(range(1, 7))
    assert csv["/a"].tolist() == list(figure.data[0].y)
    assert csv["time"].iloc[0].endswith("+09:00")
    assert history.download(1, None)[0] is no_update


def test_an_unknown_site_says_so_and_links_the_known_ones(history, seeded):
    out = history.render("?site=nosuch&tz=UTC")
    table, alert, plotted = out["totals"], out["alert"], out["plotted"]
    assert table is None and plotted is None
    text = str(alert)
    assert "'nosuch' has no data" in text and "/history?site=s&tz=UTC" in text


def test_query_errors_become_messages(history, seeded):
    out = history.render("?site=s&range=custom&start=2026-11-09&end=2026-11-01")
    figure, table, alert = out["figure"], out["totals"], out["alert"]
    assert "empty range" in str(alert)
    assert table is None
    assert figure.layout.annotations[0].text == "Nothing to show"
    alert = history.render("?site=s&range=90d&gran=minute")["alert"]
    assert "too many to draw" in str(alert)


def test_empty_store_says_how_to_get_data(history):
    alert = history.render("")["alert"]
    assert "hitboard ingest FILE" in str(alert)
    assert compute_view("").site is None


def test_clicking_a_day_opens_its_hours_and_an_hour_its_minutes(history, seeded):
    """The render tells the browser where a click goes (the browser fills in the clicked
    bucket: tests/browser/test_browser_history.py): a day's hours, an hour's minutes,
    nothing under a minute."""
    drill = history.render("?site=s&range=90d&tz=UTC")["drill"]
    assert drill == {"granularity": "day", "href": "/history?site=s&tz=UTC&end=END"
                                                   "&gran=hour&range=custom&start=START"}
    drill = history.render("?site=s&range=custom&start=2026-11-20&end=2026-11-21&gran=hour"
                           "&tz=UTC")["drill"]
    assert drill["granularity"] == "hour" and "gran=minute" in drill["href"]
    assert history.render("?site=s&range=today&gran=minute")["drill"] is None
    assert history.render("?site=s&tz=Mars/Olympus")["drill"] is None


def test_controls_write_the_url(history):
    out = history.apply_controls({"history-range"}, "30d", None, None, "auto", "lines", [],
                                 "?site=s&range=custom&start=x")
    search, start, end, preset = out["search"], out["start_date"], out["end_date"], out["preset"]
    assert search == "?site=s&range=30d"
    assert start < end
    assert preset is no_update  # the control already shows it
    out = history.apply_controls(
        {"history-dates"}, "7d", "2026-11-01", "2026-11-03", "day", "stacked", ["1"], "?site=s")
    search, preset = out["search"], out["preset"]
    assert search == "?site=s&end=2026-11-04&range=custom&start=2026-11-01"
    assert preset == "custom"  # the preset follows the picked dates
    assert history.apply_controls({"history-dates"}, "7d", "2026-11-01", None, "auto", "lines",
                                  [], "?site=s")["search"] is no_update
    assert history.apply_controls({"history-mode"}, "7d", None, None, "auto", "lines", [],
                                  "?site=s")["search"] is no_update
    shown = "?site=s&range=custom&start=2026-11-01&end=2026-11-04"
    assert history.apply_controls({"history-dates"}, "custom", "2026-11-01", "2026-11-03",
                                  "auto", "lines", [], shown) == UNCHANGED


def test_a_sub_day_range_survives_controls_reporting_their_values(history):
    hour = "?site=s&tz=UTC&end=2026-11-20T11:00&gran=minute&range=custom&start=2026-11-20T10:00"
    mounted = history.apply_controls({"history-range", "history-dates"}, "custom", "2026-11-20",
                                     "2026-11-20", "minute", "lines", [], hour)
    assert mounted == UNCHANGED
    search = history.apply_controls({"history-compare"}, "custom", "2026-11-20",
                                    "2026-11-20", "minute", "lines", ["1"], hour)["search"]
    assert "start=2026-11-20T10:00" in search and "end=2026-11-20T11:00" in search
    assert "compare=1" in search


def test_compare_keeps_custom_dates_even_if_the_preset_control_lags(history):
    custom = "?site=s&tz=UTC&end=2026-11-15&range=custom&start=2026-11-10"
    out = history.apply_controls(
        {"history-compare"}, "7d", "2026-11-10", "2026-11-14", "auto", "lines", ["1"], custom)
    search, preset = out["search"], out["preset"]
    assert "range=custom" in search and "start=2026-11-10" in search
    assert preset == "custom"


def test_a_render_parses_the_url_once(history, seeded, monkeypatch):
    """The chart, its notes, the comparison's title and the totals all read the one
    parsed URL the view keeps."""
    from dashboard.pages.history import view as view_module
    from dashboard.state import parse_search

    calls = []

    def counted(search):
        calls.append(search)
        return parse_search(search)

    for module in (view_module, history):
        monkeypatch.setattr(module, "parse_search", counted)
    out = history.render(f"?site=s&tz={TOKYO}&range=7d&compare=1")
    assert out["alert"] is None and "Previous period" in str(out["totals"])
    assert len(calls) == 1
