"""Presenter mode's reads (on every backend) and its URL parsing."""

import datetime as dt
import html

import pytest
from dashkit import seed, utc

from dashboard.pages.present.view import DEFAULT_WINDOW, PresentView
from dashboard.state import parse_search
from queries.events.writer import EventWriter
from queries.reads.presenter import DayComparison, minute_counts, ticker, today_vs_yesterday

NOW = utc(2026, 11, 21, 14, 30, 25)


def test_minute_counts_end_with_the_minute_still_filling(db):
    seed(db, "s", [(NOW - dt.timedelta(minutes=m), f"/p{m % 2}", m + 1) for m in range(20)])
    points = minute_counts(db, "s", NOW, minutes=15)
    assert len(points) == 15
    assert points[-1] == (utc(2026, 11, 21, 14, 30), 1)
    assert points[0] == (utc(2026, 11, 21, 14, 16), 15)
    assert [v for _, v in points] == list(range(15, 0, -1))


def test_today_against_the_same_time_yesterday(db):
    seed(db, "s", [(utc(2026, 11, 21, 9), "/", 30), (utc(2026, 11, 21, 14, 30), "/", 2),
                   (utc(2026, 11, 20, 9), "/", 20), (utc(2026, 11, 20, 14, 31), "/", 99)])
    days = today_vs_yesterday(db, "s", NOW)
    assert days == DayComparison(today=32, yesterday=20)  # yesterday's 14:31 is later
    assert days.change == 60.0
    assert DayComparison(today=5, yesterday=0).change is None


def test_today_is_counted_from_midnight_in_the_zone(db):
    seed(db, "s", [(utc(2026, 11, 20, 23, 30), "/", 7), (utc(2026, 11, 21, 1), "/", 1)])
    assert today_vs_yesterday(db, "s", NOW, "Europe/Paris").today == 8   # 00:30 Paris
    assert today_vs_yesterday(db, "s", NOW, "UTC").today == 1


def test_yesterday_is_read_to_the_same_local_time_on_a_day_the_clocks_change(db):
    now = utc(2026, 3, 29, 11, 1)            # 13:01 in Paris, summer time since 02:00
    seed(db, "s", [(utc(2026, 3, 28, 11, 30), "/", 5),    # yesterday 12:30 (winter time)
                   (utc(2026, 3, 28, 12, 2), "/", 50)])   # yesterday 13:02: after 13:01
    assert today_vs_yesterday(db, "s", now, "Europe/Paris").yesterday == 5


def test_ticker_names_page_referrer_host_and_known_country(db):
    writer = EventWriter(db)
    for event in (
        {"time": NOW - dt.timedelta(seconds=2), "site": "s", "host": "8.8.8.8", "method": "GET",
         "path": "/a", "query": "", "status": 200, "bytes": 10,
         "referrer": "https://news.example/x", "user_agent": "curl/8"},
        {"time": NOW - dt.timedelta(seconds=1), "site": "s", "host": "10.0.0.1",
         "method": "GET", "path": "/b", "query": "", "status": 200, "bytes": 10,
         "referrer": None, "user_agent": "curl/8"},
    ):
        writer.add(event)
    writer.flush()
    rows = ticker(db, "s", n=5)
    assert [(r["page"], r["referrer"], r["country"]) for r in rows] == [
        ("/b", "(direct)", None), ("/a", "news.example", "US")]


def test_present_view_from_the_url():
    view = PresentView.from_query(parse_search("?present=1&cycle=30&views=live,history-30d,top"))
    assert view == PresentView(views=("live", "history-30d", "top"), cycle=30,
                               window=DEFAULT_WINDOW, theme="dark")
    odd = PresentView.from_query(parse_search("?views=nope,top,top&cycle=2&window=7&theme=light"))
    assert odd == PresentView(views=("top",), cycle=None, window=DEFAULT_WINDOW, theme="light")
    assert PresentView.from_query({}).views == ("live",)
    assert PresentView.from_query(parse_search("?visits=1")).visits
    assert not PresentView.from_query(parse_search("?visits=yes")).visits


def test_kpi_texts_and_rows_keyed_for_animation():
    import pandas as pd

    from components import presenter as ui

    assert [ui.change_text(c) for c in (None, 12.4, -3.25, 0.0)] == [
        "–", "+12 %", "−3.2 %", "+0.0 %"]
    top = pd.DataFrame({"hits": [9, 3]}, index=pd.Index(["/a", "/b"], name="page"))
    rows = ui.top_items(top)
    assert [row.key for row in rows] == ["p:/a", "p:/b"]
    assert rows[1].children[-1].style == {"width": "33.3%"}
    ticker_rows = ui.ticker_items([{"id": "1", "time": NOW, "page": "/<b>", "referrer": "x.org",
                                    "country": None}], "Europe/Paris")
    assert ticker_rows[0].key == "1" and ticker_rows[0].children[0].children == "15:30:25"
    assert ticker_rows[0].children[1].children == "/<b>"   # text, never markup


def _boxes(layout, width):
    """Each label's pixels (left, right) and row, as the layout places them."""
    from components.presenter_notes import ROW_PX, _px

    start, end = NOW - dt.timedelta(minutes=15), NOW + dt.timedelta(minutes=1)
    boxes = []
    for label in layout["annotations"]:
        at = (dt.datetime.fromisoformat(label["x"]).replace(tzinfo=dt.UTC) - start) / (
            end - start) * width
        px = _px(label["text"])
        left = at if label["xanchor"] == "left" else at - px
        boxes.append((left, left + px, label["yshift"] // ROW_PX))
    return boxes


TEXTS = ["deployed v2.3 with the new checkout and a much longer description", "cache flushed",
         "traffic spike from the newsletter sent to 40,000 readers", "load generator stopped",
         "load generator started: 1 hits/s on 2 sites", "rollback", "second deploy of v2.4"]


@pytest.mark.parametrize(("width", "notes", "seconds"), [
    (1100, 5, 40), (640, 5, 40), (330, 5, 40),      # five notes in three minutes
    (330, 7, 5), (1100, 7, 1)])                     # seven in half a minute, in seven s
def test_notes_labels_never_overlap_nor_leave_the_chart(width, notes, seconds):
    """Notes crowded at the right edge of a 15-minute window (the room's screen ran their
    labels into each other and past the edge): every note keeps its line and its text in
    a hover, a label of its own when there is room."""
    from components.presenter_notes import ROWS, note_layout

    texts = TEXTS[:notes]
    notes = [{"time": NOW - dt.timedelta(seconds=seconds * i), "text": text, "kind": "deploy",
              "site": "s", "author": "ci"} for i, text in enumerate(texts)]
    layout = note_layout(notes, dt.UTC, NOW - dt.timedelta(minutes=15),
                         NOW + dt.timedelta(minutes=1), width)
    assert len(layout["shapes"]) == len(texts) and len(layout["annotations"]) >= ROWS
    boxes = _boxes(layout, width)
    assert all(left >= 0 and right <= width for left, right, _ in boxes)
    assert all(row < ROWS for _, _, row in boxes)
    for i, (a_left, a_right, a_row) in enumerate(boxes):
        for b_left, b_right, b_row in boxes[i + 1:]:
            assert a_row != b_row or a_right <= b_left or b_right <= a_left
    hovers = " ".join(label["hovertext"] for label in layout["annotations"])
    assert all(text.split()[-1] in hovers for text in texts)   # the whole text, always


def test_a_note_near_the_right_edge_is_labelled_leftwards_and_long_text_is_cut():
    from components.presenter_notes import MAX_CHARS, note_layout

    text = "deployed <b>v2.3</b> " + "x" * 80
    notes = [{"time": NOW, "text": text, "kind": "deploy", "site": "s", "author": "ci"},
             {"time": NOW - dt.timedelta(minutes=14), "text": "early", "kind": "note",
              "site": "s"}]
    layout = note_layout(notes, dt.UTC, NOW - dt.timedelta(minutes=15),
                         NOW + dt.timedelta(minutes=1), 1000)
    early, late = layout["annotations"]
    assert (early["xanchor"], early["text"], early["yshift"]) == ("left", "▼ early", 0)
    assert late["xanchor"] == "right" and late["text"].endswith("… ▼")
    assert len(html.unescape(late["text"])) == MAX_CHARS + len(" ▼")
    assert "&lt;b&gt;" in late["text"] and "<b>" not in late["text"]    # text, not markup
    assert "x" * 60 in late["hovertext"].replace("<br>", "")
    assert layout["shapes"][1]["x0"] == "2026-11-21 14:30:25"


def test_note_labels_sit_above_the_line_in_a_band_of_their_own():
    """A spike's note was drawn over the spike's peak: labels go above the plot, the top
    margin growing by a row of labels per row used (none without notes)."""
    from components.presenter_notes import ROW_PX, TOP_PX, note_layout

    start, end = NOW - dt.timedelta(minutes=15), NOW + dt.timedelta(minutes=1)
    assert note_layout([], dt.UTC, start, end, 1000)["top"] == TOP_PX
    notes = [{"time": NOW - dt.timedelta(seconds=s), "text": "traffic spike " * 3,
              "kind": "spike", "site": "s"} for s in (0, 5)]
    layout = note_layout(notes, dt.UTC, start, end, 300)
    assert {(a["yref"], a["y"], a["yanchor"]) for a in layout["annotations"]} == {
        ("paper", 1, "bottom")}
    rows = {a["yshift"] // ROW_PX for a in layout["annotations"]}
    assert rows == {0, 1} and layout["top"] == TOP_PX + 2 * ROW_PX


def test_the_presenters_count_axes_separate_thousands_as_lives_do():
    import pandas as pd

    from components import presenter as ui

    assert ui.live_line("dark").layout.yaxis.tickformat == ",d"
    days = pd.DataFrame({"/a": [12_345, 23_456]},
                        index=pd.date_range("2026-11-20", periods=2, tz="UTC"))
    assert ui.days_figure(days, "dark").layout.yaxis.tickformat == ",d"
    top = pd.DataFrame({"hits": [12_345, 3]}, index=pd.Index(["/a", "/b"], name="page"))
    assert ui.bars_figure(top, "light").layout.xaxis.tickformat == ",d"
    small = ui.bars_figure(top.assign(hits=[3, 1]), "light").layout.xaxis
    assert (small.tick0, small.dtick) == (0, 1)       # no "0 1 1" for 0, 0.5, 1
