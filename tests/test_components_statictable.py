"""components/statictable.py and the Data page's tables built on it: one element each,
cells as data (text), every cell named after its column for the phone layout."""

import datetime as dt
import json
import socket

import pytest

from components.statictable import cell, static_table, table_cells
from components.storetables import collections_table, logs_table, plans_table


def test_a_table_is_one_element_holding_its_cells_as_text():
    table = static_table(("Page", "Hits"), [[cell("<script>alert(1)</script>"),
                                             cell("12", "num", hint="of 30")]], "t")
    assert table.id == "t" and table.className == "static-table"
    assert not getattr(table, "children", None)          # the browser draws the table
    spec = json.loads(getattr(table, "data-table"))
    assert spec["class"] == "totals stack-on-phone" and spec["head"] == ["Page", "Hits"]
    assert spec["rows"] == [[{"t": ["<script>alert(1)</script>"], "l": "Page"},
                             {"t": ["12"], "c": "num", "h": "of 30", "l": "Hits"}]]


def test_cells_under_a_rowspan_are_named_after_their_own_column():
    rows = [[cell("chart", rowspan=2), cell("a"), cell("1")], [cell("b"), cell("2")],
            [cell("other"), cell("c", label="Plan", colspan=2)]]
    labels = [[c["l"] for c in row] for row in table_cells(static_table(("Chart", "Query",
                                                                          "Rows"), rows))]
    assert labels == [["Chart", "Query", "Rows"], ["Query", "Rows"], ["Chart", "Plan"]]


def test_the_data_pages_tables_keep_their_columns_spans_and_notes():
    plans = [{"chart": "Live · totals", "collection": "stats.daily", "filter": '{"a": 1}',
              "runs": 2, "index": "site_page_date", "detail": "SEARCH stats.daily",
              "keys_examined": 1, "docs_examined": 1, "returned": 1},
             {"chart": "Live · totals", "collection": "stats.monthly", "filter": "{}",
              "reason": "explain failed: no"}]
    first, second = table_cells(plans_table(plans))
    assert first[0] == {"t": ["Live · totals"], "r": 2, "l": "Chart"}
    assert first[2]["h"] == "sent 2× per refresh (the same documents)"
    assert first[3] == {"t": ["site_page_date"], "h": "SEARCH stats.daily", "l": "Index"}
    assert second[-1] == {"t": ["explain failed: no"], "c": "hint", "l": "Plan", "s": 4}
    (row,) = table_cells(collections_table([{
        "name": "events", "count": 3, "size_bytes": 10, "size_is_estimate": True,
        "stored_bytes": 3 * 2**20,
        "indexes": (("_id_", (("_id", 1),)), ("site_end", (("site", 1), ("end", 1)))),
        "ttl_seconds": 86_400 * 14}]))
    assert row[4]["t"] == ["_id_ {_id: 1}", "site_end {site: 1, end: 1}"]
    assert [c["t"][0] for c in row] == ["events", "3", "≈ 0.0 KB", "≈ 3.00 MB",
                                        "_id_ {_id: 1}", "14 days (TTL)"]
    assert "h" not in row[0]                   # no representation named: no line
    (unknown,) = table_cells(collections_table([{
        "name": "stats.daily", "count": 3, "size_bytes": 10, "size_is_estimate": False,
        "stored_bytes": None, "indexes": (), "ttl_seconds": None,
        "holds": "pre-aggregated stats"}]))
    assert unknown[3]["t"] == ["–"]
    assert unknown[0] == {"t": ["stats.daily"], "h": "pre-aggregated stats",
                          "l": "Collection"}
    (log,) = table_cells(logs_table([{
        "path": "/var/log/a.log", "host": socket.gethostname(), "lines": 14, "hits": 12,
        "rejected": {"malformed": 2, "bot": 0}, "tolerated": {"undecodable_bytes": 3},
        "updated": None, "pid": None, "running": False, "interrupted": False}], dt.UTC))
    assert (log[0]["t"], log[0]["h"], log[5]) == (["/var/log/a.log"], socket.gethostname(),
                                                  {"t": ["2"], "h": "2 malformed",
                                                   "l": "Not read"})
    assert log[4] == {"t": ["3"], "h": "3 undecodable bytes", "l": "Read despite"}


def test_a_card_is_one_element_holding_its_tree_as_text_and_reads_back_as_built():
    """History's panels and KPI cards (components/statictable.static): one element whose
    data the browser draws (assets/statictree.js), text never markup, a link kept as a
    link, only the attributes the script sets; ``rebuilt`` gives back what was built."""
    from dash import dcc, html

    from components.statictable import rebuilt, static, text_of, tree_of

    card = html.Section(id="c", className="card", children=[
        html.Table([html.Tbody([html.Tr([
            html.Td([html.Div(className="bar", style={"width": "40%"}),
                     dcc.Link("<b>x</b>", href="/history?filter=a:b", title="<b>x</b>")]),
            html.Td(html.Span("≈12", className="estimate", title="±1"), colSpan=2)])])]),
        html.P("note", n_clicks=3, **{"data-x": "1"})])
    box = static(card, classes="cards")
    assert box.className == "static-tree cards" and not getattr(box, "children", None)
    (section,) = tree_of(box)
    assert section[:2] == ["section", {"id": "c", "class": "card"}]
    link = section[2][2][2][2][3]
    assert link == ["a", {"data-link": "1", "href": "/history?filter=a:b",
                          "title": "<b>x</b>"}, "<b>x</b>"]
    assert section[3] == ["p", {"data-x": "1"}, "note"]         # n_clicks is no attribute
    assert text_of(box) == "<b>x</b> ≈12 note"
    (again,) = rebuilt(box)
    td = again.children[0].children[0].children[0].children[1]
    assert td.children.className == "estimate" and td.colSpan == "2"   # alone, as built
    assert isinstance(again.children[0].children[0].children, list)    # a list, as built
    with pytest.raises(TypeError, match="not plain HTML"):
        static(dcc.Graph(id="g"))
