"""Rollup figure, table and badge builders."""

from __future__ import annotations

import pandas as pd

from components.rollups import (
    bucket_label,
    consistency_badge,
    rollup_figure,
    rollup_rows,
    rollup_table,
    run_status,
)


def table():
    index = pd.DatetimeIndex(["2015-05-11", "2015-05-18"], tz="UTC", name="time")
    return pd.DataFrame({"hits": [10, 20], "bytes": [1000, 500], "mean_bytes": [100.0, 25.0],
                         "error_rate": [0.1, 0.0], "2xx": [9, 20], "3xx": [0, 0],
                         "4xx": [1, 0], "5xx": [0, 0], "other": [0, 0]}, index=index)


def test_figure_draws_the_chosen_metric_per_bucket():
    figure = rollup_figure(table(), level="week", metric="error_rate")
    assert list(figure.data[0].x) == ["2015-W20 (11 May)", "2015-W21 (18 May)"]
    assert list(figure.data[0].y) == [0.1, 0.0]
    assert figure.layout.yaxis.tickformat == ".0%"
    assert list(rollup_figure(table(), level="week", metric="hits").data[0].y) == [10, 20]


def test_table_rows():
    data = rollup_rows(table(), level="day")
    assert data[0] == {"bucket": "2015-05-11", "hits": 10, "bytes": 1000, "mean_bytes": 100.0,
                       "error_rate": "10.00%", "2xx": 9, "3xx": 0, "4xx": 1, "5xx": 0,
                       "other": 0}
    rendered = rollup_table(table(), level="day", component_id="t").children
    header, body = rendered.children
    assert len(header.children.children) == 10 and len(body.children) == 2
    assert body.children[0].children[0].children == "2015-05-11"
    cells = [td.children for td in body.children[1].children]
    assert cells[1:4] == ["20", "500", "25.0"]        # a whole mean keeps its decimal


def test_badge_states():
    empty = pd.DataFrame({"rollup": [], "stats": []})
    assert "No rollups" in str(consistency_badge("day", 0, empty))
    assert "Consistent: 4 day buckets" in str(consistency_badge("day", 4, empty))
    index = pd.DatetimeIndex([f"2015-05-{d}" for d in range(10, 17)], tz="UTC")
    differing = pd.DataFrame({"rollup": range(7), "stats": range(1, 8)}, index=index)
    text = str(consistency_badge("day", 9, differing))
    assert "7 of 9 day buckets differ" in text and "2015-05-10: rollup 0 vs stats 1" in text
    assert "and 2 more" in text
    assert bucket_label("hour", pd.Timestamp("2015-05-10 13:00", tz="UTC")) == "2015-05-10 13:00"


def test_empty_table_gets_a_message_not_bare_axes():
    figure = rollup_figure(pd.DataFrame(columns=["hits"]), level="week", metric="hits")
    assert not figure.data
    assert "No week rollups yet" in figure.layout.annotations[0].text


def test_run_status_separates_its_parts():
    text = str(run_status("2 s ago", "5 s", 12).children)
    assert "Last run: 2 s ago" in text and " · " in text and "Events waiting: 12" in text


def test_selected_pages_get_a_series_and_a_column_each():
    both = pd.concat([table().assign(page="/a"), table().assign(page="/b")]).sort_index(
        kind="stable")
    figure = rollup_figure(both, level="day", metric="hits")
    assert [trace.name for trace in figure.data] == ["/a", "/b"]
    assert figure.layout.barmode == "group" and figure.layout.showlegend
    header, body = rollup_table(both, level="day", component_id="t").children.children
    assert [th.children for th in header.children.children][:2] == ["Bucket (UTC)", "Page"]
    assert [row.children[1].children for row in body.children] == ["/a", "/b", "/a", "/b"]
