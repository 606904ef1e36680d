"""dashboard/pages/live/page.py: the live page's callbacks as plain functions."""

import base64
import datetime as dt

import numpy as np
import plotly.graph_objects as go
import pytest
import time_machine
from dash import no_update
from dashkit import page_module, seed
from dimkit import ingest_sample

from dashboard.services import get_services

# A year's first minutes, a day's middle, a year's last seconds.
INSTANTS = {"new year": dt.datetime(2026, 1, 1, 0, 2, 30, tzinfo=dt.UTC),
            "noon": dt.datetime(2026, 3, 29, 12, 30, 15, tzinfo=dt.UTC),
            "last seconds": dt.datetime(2026, 12, 31, 23, 59, 50, tzinfo=dt.UTC)}


@pytest.fixture(params=INSTANTS, autouse=True)
def now(request):
    """Every test at each instant of ``INSTANTS``: the clock is frozen there."""
    with time_machine.travel(INSTANTS[request.param], tick=False):
        yield INSTANTS[request.param]


@pytest.fixture
def live(app):
    return page_module("live")


def decoded(values):
    """A trace's numbers; plotly's ``to_dict`` ships numeric arrays as base64 typed arrays."""
    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"])
    return values


def kpi_values(cards):
    return {card.children[1].id: card.children[1].children for card in cards}


def test_refresh_shows_the_last_hour_the_kpis_and_the_top_pages(app, live, now):
    db = get_services(app.server).db
    # Earlier in the hour and in the same UTC day: "top pages today" must count it.
    earlier = max(now - dt.timedelta(minutes=20),
                  now.replace(hour=0, minute=0, second=0, microsecond=0))
    seed(db, "s", [(now, "/a", 3), (now, "/b", 1), (earlier, "/b", 5)])
    out = live.refresh(0, "?site=s&tz=UTC")
    figure, cards, bars, updated, alert = (out[k] for k in ("figure", "kpis", "top", "updated",
                                                            "alert"))
    figure = go.Figure(figure)  # shared as a plain dict
    assert alert is None
    values = kpi_values(cards)
    assert values["live-kpi-minute"] == "4"
    assert values["live-kpi-hour"] == "9"
    assert values["live-kpi-today"] == "9"
    assert figure.data[0].name == "Whole site"
    assert sum(decoded(figure.data[0].y)) == 9
    assert len(figure.data[0].x) == 61
    assert figure.layout.uirevision.startswith("live|s|")
    table, basis = bars
    first = table.children[1].children[0].children
    assert first[0].children[1].title == "/b" and first[1].children == "6"
    assert basis.children.startswith("Every hit, bots included")   # no dimensions here
    assert updated["age"] >= 0


def test_top_pages_today_are_peoples_page_views(app, live, tmp_path, now):
    """As History ranks them: Googlebot's hits on / and the stylesheet are left out."""
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    start = max(midnight, now - dt.timedelta(minutes=2)).replace(microsecond=0)
    ingest_sample(get_services(app.server).db, "s", tmp_path, start=start,
                  step=dt.timedelta(seconds=1))
    table, basis = live.refresh(0, "?site=s&tz=UTC")["top"]
    rows = [(row.children[0].children[1].title, row.children[1].children)
            for row in table.children[1].children]
    assert rows == [("/", "40"), ("/about", "20"), ("/missing", "5")]
    assert basis.children.startswith("People's page views")
    table, basis = live.refresh(0, "?site=s&tz=UTC&bots=1")["top"]   # as the panels below
    assert table.children[1].children[0].children[1].children == "55"
    assert basis.children.startswith("Page views, bots included")


def test_selected_pages_get_a_line_each_and_the_window_comes_from_the_url(app, live, now):
    seed(get_services(app.server).db, "s", [(now, "/a", 2), (now, "/b", 7)])
    out = live.refresh(0, "?site=s&page=/a&page=/b&window=15")
    figure, cards = out["figure"], out["kpis"]
    figure = go.Figure(figure)
    assert [trace.name for trace in figure.data if trace.showlegend is not False] == [
        "/a", "/b"]
    assert len(figure.data[0].x) == 16
    assert kpi_values(cards)["live-kpi-hour"] == "9"


def test_the_window_holds_the_current_minute_from_its_first_instant(app, live, now):
    """A snapshot taken on a minute's boundary (one second in sixty) still ends with
    that minute: window minutes before it, and itself."""
    minute = now.replace(second=0, microsecond=0)
    seed(get_services(app.server).db, "s", [(minute, "/a", 2)])
    with time_machine.travel(minute, tick=False):
        out = live.refresh(0, "?site=s&page=/a&window=15&tz=UTC")
    figure = go.Figure(out["figure"])
    x = figure.data[0].x
    assert len(x) == 16
    assert str(x[-1]).startswith(f"{minute:%Y-%m-%d %H:%M}")
    # That minute runs, even at its first instant: shaded, reached by a dashed line.
    assert [shape.name for shape in figure.layout.shapes] == ["incomplete"]
    assert figure.data[0].line.dash == "dash" and len(figure.data[1].x) == 15


def test_the_hit_cards_say_they_count_hits_bots_included(app, live, now):
    """Beside the people (humans, from raw events) below them: each card says what it
    counts."""
    seed(get_services(app.server).db, "s", [(now, "/a", 3)])
    cards = live.refresh(0, "?site=s&tz=UTC")["kpis"]
    labels = [card.children[0].children for card in cards]
    notes = [card.children[2].children for card in cards]
    assert labels == ["Hits this minute", "Hits, last hour", "Hits today"]
    assert all(note.endswith("every hit, bots included") for note in notes)


def test_notes_of_two_kinds_have_a_legend_entry_each_in_their_markers_colour(app, live,
                                                                            now):
    """The demo's: a backfill and a load test noted in the same second; one trace of
    markers held both colours, and the legend showed the first (green) beside an orange
    marker."""
    from components.annotations import KIND_COLORS
    from queries import annotations as notes

    db = get_services(app.server).db
    seed(db, "s", [(now - dt.timedelta(minutes=m), "/a", 3) for m in range(10)])
    at = now - dt.timedelta(minutes=5)
    notes.add_annotation(db, "s", at, "backfilled 30 days", "backfill", "hitboard")
    notes.add_annotation(db, "s", at, "load generator started", "load-test", "hitboard")
    figure = go.Figure(live.refresh(0, "?site=s&tz=UTC")["figure"])
    markers = [t for t in figure.data if t.name and t.name.startswith("Notes")]
    assert sorted((t.name, t.marker.color) for t in markers) == [
        ("Notes · Backfill", KIND_COLORS["backfill"]),
        ("Notes · Load test", KIND_COLORS["load-test"])]
    assert all(t.showlegend for t in markers)
    # In the same minute: one marker under the other, not hidden by it.
    assert sorted(round(t.y[0], 2) for t in markers) == [0.93, 1.0]


def test_viewers_in_the_same_bucket_share_one_read(app, live):
    cache = get_services(app.server).cache
    live.refresh(0, "?site=s")
    misses = cache.misses
    for _ in range(5):
        live.refresh(0, "?site=s")
    assert cache.misses - misses <= 3  # a bucket boundary may fall in between, once


def test_empty_store_says_how_to_get_data(live):
    out = live.refresh(0, "")
    figure, updated, alert = out["figure"], out["updated"], out["alert"]
    assert "hitboard ingest FILE" in str(alert)
    assert figure.layout.annotations[0].text == "No data yet"
    assert updated is None


def test_a_bad_time_zone_is_a_message_not_a_traceback(live):
    out = live.refresh(0, "?site=s&tz=Mars/Olympus")
    figure, cards, alert = out["figure"], out["kpis"], out["alert"]
    assert "unknown time zone 'Mars/Olympus'" in str(alert)
    assert cards is no_update
    assert figure.layout.annotations[0].text == "Could not load"


def test_window_choice_is_written_to_the_url(live):
    assert live.choose_window("15", "?site=s") == "?site=s&window=15"
    assert live.choose_window("60", "?site=s&window=15") == "?site=s"
    assert live.choose_window("60", "?site=s") is no_update
