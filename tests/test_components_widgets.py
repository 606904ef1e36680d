"""components: top-pages bars, KPI cards, totals table, messages, notice figures."""

import pandas as pd

from components import (
    Kpi,
    change_percent,
    empty_state,
    format_change,
    kpi_cards,
    message,
    notice_figure,
    page_colors,
    top_pages_figure,
    totals_table,
)
from components.legend import OTHER_COLOR


def test_top_pages_most_visited_first_with_exact_counts():
    top = pd.DataFrame({"hits": [1500, 20]}, index=pd.Index(["/a", "/" + "x" * 60],
                                                             name="page"))
    figure = top_pages_figure(top, pages=["/a"])
    bar = figure.data[0]
    assert list(bar.y) == ["/a", "/" + "x" * 60]
    assert list(bar.text) == ["1,500", "20"]
    assert list(bar.marker.color) == [page_colors(["/a"])["/a"], OTHER_COLOR]
    assert figure.layout.yaxis.ticktext[1].endswith("…")
    assert figure.layout.yaxis.autorange == "reversed"


def test_kpi_cards_show_exact_numbers_or_a_dash():
    cards = kpi_cards([Kpi("k1", "Today", 1234567, "since midnight"), Kpi("k2", "Hour", None)])
    assert cards[0].children[1].children == "1,234,567"
    assert cards[0].children[1].id == "k1"
    assert cards[1].children[1].children == "–"


def test_change_percent_and_its_wording():
    assert change_percent(150, 100) == 50
    assert change_percent(5, 0) is None
    assert format_change(50.0) == "+50.0 %"
    assert format_change(-12.34) == "−12.3 %"
    assert format_change(None, current=5) == "new"
    assert format_change(None, current=0) == "–"


def _cells(table):
    body = table.children[1]
    return [[cell.children if isinstance(cell.children, str) else cell.children[-1]
             for cell in row.children] for row in body.children]


def test_totals_table_with_previous_period():
    index = pd.date_range("2026-11-21", periods=2, freq="h", tz="UTC")
    current = pd.DataFrame({"/a": [10, 20], "/b": [1, 1]}, index=index)
    previous = pd.DataFrame({"/a": [10, 10], "/b": [0, 0]}, index=index)
    table = totals_table(current, previous, table_id="t")
    assert table.id == "t"
    assert _cells(table) == [["/a", "30", "20", "+50.0 %"], ["/b", "2", "0", "new"]]
    assert [th.children for th in table.children[0].children.children] == [
        "Page", "Hits", "Previous period", "Change"]
    assert _cells(totals_table(current)) == [["/a", "30"], ["/b", "2"]]


def test_messages_and_empty_state_name_every_way_to_get_data():
    assert message("boom").className == "notice notice-error"
    text = str(empty_state("/tmp/store"))
    for needle in ("load generator", "hitboard ingest FILE", "/hit beacon", "/tmp/store"):
        assert needle in text


def test_notice_figure_has_no_axes_and_says_why():
    figure = notice_figure("No data yet", "dark")
    assert figure.layout.annotations[0].text == "No data yet"
    assert figure.layout.xaxis.visible is False
