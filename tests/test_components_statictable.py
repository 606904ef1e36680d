"""components/statictable.py and the Data page's tables built on it: one element each,
cells as data (text), every cell named after its column for the phone layout."""

import datetime as dt
import json
import socket

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
