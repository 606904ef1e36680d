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
    top_pages_table,
    totals_table,
)
from components.legend import OTHER_COLOR


def test_top_pages_most_visited_first_with_exact_counts():
    long = "/" + "x" * 300
    top = pd.DataFrame({"hits": [1500, 20]}, index=pd.Index(["/a", long], name="page"))
    table = top_pages_table(top, pages=["/a"])
    rows = table.children[1].children
    cells = [row.children for row in rows]
    assert [c[0].children[1].title for c in cells] == ["/a", long]   # full names
    assert [c[1].children for c in cells] == ["1,500", "20"]
    assert [c[0].children[0].style["background"] for c in cells] == [
        page_colors(["/a"])["/a"], OTHER_COLOR]
    assert [c[0].children[0].style["width"] for c in cells] == ["100.0%", "1.3%"]
    assert cells[1][0].children[1].children.endswith("…")  # the CSS cuts the rest
    assert all(c[0].className == "bd-value" and c[1].className == "num" for c in cells)
    empty = top_pages_table(top.head(0))
    assert empty.children[1].children[0].children.children == "No hits today yet"


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


def test_a_rates_change_is_in_percentage_points():
    """21.6 % against 4.2 %: +17.4 points, not +409.6 % (a change of a change)."""
    from components.numbers import percent
    from components.tables import format_points

    index = pd.date_range("2026-11-21", periods=1, freq="D", tz="UTC")
    now, before = (pd.DataFrame({"*": [value]}, index=index) for value in (21.6, 4.2))
    table = totals_table(now, before, totals={"*": 21.6}, previous_totals={"*": 4.2},
                         shown=percent, measure="Bounce rate", rate=True)
    assert _cells(table) == [["Whole site", "21.6 %", "4.2 %", "+17.4 pts"]]
    assert [format_points(p) for p in (-3.25, 0.01, None)] == ["−3.2 pts", "0.0 pts", "–"]


def test_messages_and_empty_state_name_every_way_to_get_data():
    assert message("boom").className == "notice notice-error"
    text = str(empty_state("/tmp/store"))
    for needle in ("load generator", "hitboard ingest FILE", "/hit beacon", "/tmp/store"):
        assert needle in text


def test_notice_figure_has_no_axes_and_says_why():
    figure = notice_figure("No data yet", "dark")
    assert figure.layout.annotations[0].text == "No data yet"
    assert figure.layout.xaxis.visible is False
