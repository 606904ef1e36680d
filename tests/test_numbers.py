"""components/numbers.py: every figure a page shows has thousands separators, decimals
included, and the pages' builders use it (a KPI of 1730.15 views per visitor read
"1730.15")."""

import pandas as pd
import pytest

from components import Kpi, kpi_cards
from components import presenter as present_ui
from components.numbers import amounts, count, decimal, duration, estimate, percent, share
from components.rollups import consistency_badge, rollup_table
from components.statictable import table_cells
from components.storetables import collections_table, plans_table
from components.tables import format_change, totals_table


def test_counts_decimals_and_percentages_are_thousands_separated():
    assert count(1234567) == "1,234,567"
    assert count(12.0) == "12"
    assert decimal(1730.15, 2) == "1,730.15"
    assert decimal(-1234.5) == "−1,234.5"
    assert percent(4574.0, signed=True) == "+4,574.0 %"
    assert percent(-3.25, signed=True) == "−3.2 %"
    assert percent(12.34) == "12.3 %"
    assert share(0.173) == "17 %"


@pytest.mark.parametrize("missing", [None, float("nan"), pd.NA])
def test_a_value_not_known_is_a_dash(missing):
    assert count(missing) == decimal(missing) == percent(missing) == share(missing) == "–"


def test_history_kpis_separate_thousands_in_counts_means_and_changes():
    from dashboard.pages.history import breakdowns as breakdown_view
    from dashboard.pages.history import panels as history_panels

    figures = breakdown_view.Figures(hits=1_730_150, visitors=1_000, errors=0.5)
    before = breakdown_view.Figures(hits=37_000, visitors=1_000, errors=0.25)
    visits = breakdown_view.Totals(4_000, 1_000, 4_000 * 3_725_000, 6_920_600, 7_000_000,
                                   True)
    visits_before = breakdown_view.Totals(2_000, 1_000, 0, 2_000, 2_000, True)
    panels = breakdown_view.Panels({}, None, figures, before, 0.0, (), visits,
                                   visits_before, {}, None)
    cards = {card.children[1].id: (card.children[1].children,
                                   card.children[2].children[0].children)
             for card in history_panels._kpis(panels, humans=True, pages=False,
                                              filtered=False)}
    assert cards["history-kpi-hits"] == ("1,730,150", "+4,576.1 %")
    assert cards["history-kpi-pervisit"] == ("1,730.15", "+172,915.0 %")
    assert cards["history-kpi-visits"] == ("4,000", "+100.0 %")
    assert cards["history-kpi-pageviews"] == ("7,000,000", "+349,900.0 %")
    assert cards["history-kpi-bounce"] == ("25 %", "−25.0 pts")     # a rate: points
    assert cards["history-kpi-duration"] == ("1 h 02 min", "new")
    assert cards["history-kpi-errors"] == ("50.0 %", "+25.0 pts")


def test_a_duration_reads_in_seconds_minutes_or_hours():
    assert [duration(s) for s in (0, 42.4, 65, 3_725, None)] == \
        ["0 s", "42 s", "1 min 05 s", "1 h 02 min", "–"]


def _texts(component) -> list[str]:
    """Every string in a component tree, depth first."""
    if isinstance(component, str):
        return [component]
    if isinstance(component, list | tuple):
        return [t for child in component for t in _texts(child)]
    return _texts(getattr(component, "children", None) or [])


def test_tables_cards_and_the_presenter_separate_thousands():
    assert format_change(4574.04) == "+4,574.0 %"
    assert kpi_cards([Kpi("k", "Hits", 12345)])[0].children[1].children == "12,345"
    frame = pd.DataFrame({"/a": [1234, 1000]})
    assert "2,234" in _texts(totals_table(frame, frame * 2))
    assert present_ui.big_number(12345) == "12,345"
    assert present_ui.change_text(4574.0) == "+4,574 %"
    top = pd.DataFrame({"hits": [12345]}, index=pd.Index(["/a"], name="page"))
    assert present_ui.top_items(top)[0].children[2].children == "12,345"
    assert present_ui.bars_figure(top, "dark").data[0].text == ("12,345",)


def test_rollups_and_data_page_tables_separate_thousands():
    table = pd.DataFrame({"hits": [12345], "bytes": [1234567], "mean_bytes": [13472.04],
                          "error_rate": [0.1], "2xx": [1], "3xx": [0], "4xx": [1],
                          "5xx": [0], "other": [0]},
                         index=pd.Index([pd.Timestamp("2026-11-20", tz="UTC")], name="time"))
    texts = _texts(rollup_table(table, level="day", component_id="t"))
    assert {"12,345", "1,234,567", "13,472.0"} <= set(texts)
    badge = consistency_badge("hour", 23552, pd.DataFrame())
    assert badge.children[0].children.startswith("Consistent: 23,552 hour buckets")
    collections = collections_table([{"name": "stats.daily", "count": 23552,
                                      "size_bytes": 5 * 2**30, "size_is_estimate": False,
                                      "indexes": (), "ttl_seconds": None}])
    assert {"23,552", "5,120.00 MB"} <= _cell_texts(collections)
    plans = plans_table([{"chart": "c", "collection": "stats.daily", "filter": "{}",
                          "index": "_id_", "keys_examined": 12345, "docs_examined": 1234,
                          "returned": 1000}])
    assert {"12,345", "1,234", "1,000"} <= _cell_texts(plans)


def _cell_texts(table) -> set[str]:
    return {line for row in table_cells(table) for c in row for line in c["t"]}


def test_amounts_group_their_whole_parts_only():
    assert amounts("EUR 652890.76, USD 1200") == "EUR 652,890.76, USD 1,200"
    assert amounts("JPY 123.456789") == "JPY 123.456789"
    assert amounts("EUR 1234.567890") == "EUR 1,234.567890"
    assert amounts("") == ""


def test_an_estimate_says_so_and_gives_its_error_in_its_title():
    """Visitors from sketches: "≈" before the figure, the error in the title; an exact
    count (error 0, or none known) reads as any count."""
    shown = estimate(1653, 27)
    assert shown.children == "≈1,653"
    assert shown.title == "Estimated from sketches: ±27 (95 % interval)"
    assert estimate(1653, 0) == estimate(1653) == estimate(1653, pd.NA) == "1,653"
    assert estimate(None, 27) == estimate(pd.NA) == "–"
