"""Names are text everywhere: a stored page, referrer or note reaches
every Plotly string escaped (one helper, ``components.plotly_text.escape``), and every
CSV hitboard writes guards its cells against spreadsheet formulas (one helper,
``dashboard.spreadsheet.cell``)."""

from __future__ import annotations

import datetime as dt
import io

import pandas as pd
import pytest
from dashkit import seed

from components import presenter, timeseries_figure
from components.annotations import hover_text
from components.plotly_text import escape
from components.rollups import rollup_figure
from dashboard.cli.stats import _emit
from dashboard.pages.history import notes as history_notes
from dashboard.services import get_services
from dashboard.spreadsheet import cell, frame_csv
from queries import annotations as notes

pytestmark = pytest.mark.usefixtures("frozen_clock")   # the same days at any hour

LINK = '/<a href="https://example.org">click</a>'
BOLD = "/<b>x</b>"
TEMPLATE = "/%{y}"
SAFE_LINK = "/&lt;a href=\"https://example.org\"&gt;click&lt;/a&gt;"


def test_escape_leaves_no_markup_and_no_template():
    assert escape(LINK) == SAFE_LINK
    assert escape(BOLD) == "/&lt;b&gt;x&lt;/b&gt;"
    assert escape("a & b") == "a &amp; b"
    assert escape("&lt;") == "&amp;lt;"                  # an entity stays its characters
    assert escape(TEMPLATE) == "/%&#123;y&#125;"
    assert escape("/plain-page.html") == "/plain-page.html"
    assert escape(42) == "42"


def hourly(*pages):
    index = pd.date_range("2026-11-21", periods=2, freq="h", tz="UTC", name="time")
    return pd.DataFrame({page: [1, 2] for page in pages}, index=index)


def no_markup(text: str) -> bool:
    return "<a" not in text and "<b>" not in text and "%{y}" not in text.replace(
        ": %{y:,}", "")


def test_history_and_live_legends_and_hovers_escape_page_names():
    current = hourly(LINK, BOLD, TEMPLATE)
    figure = timeseries_figure(current, granularity="hour", pages=list(current.columns),
                               previous=current)
    assert [t.name for t in figure.data[:3]] == [SAFE_LINK, escape(BOLD), escape(TEMPLATE)]
    for trace in figure.data:
        assert no_markup(trace.name) and no_markup(trace.hovertemplate), trace.name
    assert figure.data[3].name == SAFE_LINK


def test_rollups_legend_escapes_page_names():
    index = pd.DatetimeIndex(["2026-11-21", "2026-11-21"], tz="UTC", name="time")
    table = pd.DataFrame({"page": [LINK, BOLD], "hits": [1, 2]}, index=index)
    figure = rollup_figure(table, level="day", metric="hits")
    assert [t.name for t in figure.data] == [SAFE_LINK, escape(BOLD)]


def test_presenter_bars_and_note_hovers_escape_names_and_text():
    top = pd.DataFrame({"hits": [5, 3]}, index=pd.Index([LINK, BOLD], name="page"))
    bars = presenter.bars_figure(top, "dark")
    assert list(bars.data[0].y) == [escape(BOLD), SAFE_LINK]
    note = {"time": dt.datetime(2026, 11, 21, tzinfo=dt.UTC), "kind": "note", "site": "s",
            "text": "<img src=x onerror=alert(1)>", "author": "<b>mallory</b>"}
    hover = hover_text(note, "UTC")
    assert "<img" not in hover and "<b>mallory" not in hover
    assert "&lt;img src=x onerror=alert(1)&gt;" in hover


# -- CSV -----------------------------------------------------------------------------------

@pytest.mark.parametrize("value, safe", [
    ("=HYPERLINK(\"https://evil.example\",\"x\")", "'=HYPERLINK(\"https://evil.example\",\"x\")"),
    ("+1+1", "'+1+1"), ("-2+3", "'-2+3"), ("@SUM(A1)", "'@SUM(A1)"),
    ("\t=1", "'\t=1"), ("\r=1", "'\r=1"),
    ("/page", "/page"), ("deployed v2.3", "deployed v2.3"), ("", ""), ("a=b", "a=b"),
    (-5, -5), (1.5, 1.5), (None, None),
])
def test_a_cell_that_starts_like_a_formula_is_made_text(value, safe):
    assert cell(value) == safe


def test_frame_csv_guards_headers_and_text_cells_but_not_numbers():
    frame = pd.DataFrame({"time": ["2026-11-21T00:00:00+00:00"], "=cmd|' /C calc'!A0": [-3],
                          "text": ["@evil"]})
    assert frame_csv(frame).splitlines() == [
        "time,'=cmd|' /C calc'!A0,text", "2026-11-21T00:00:00+00:00,-3,'@evil"]


def test_the_notes_csv_holds_hostile_notes_as_text(app):
    db = get_services(app.server).db
    now = dt.datetime.now(dt.UTC)
    seed(db, "s", [(now - dt.timedelta(hours=1), "/a", 1)])
    notes.add_annotation(db, "s", now - dt.timedelta(hours=1), '=HYPERLINK("https://e.x")',
                         "deploy", "+ci")
    data, alert = history_notes.notes_csv(1, "?site=s&range=7d&tz=UTC")
    table = pd.read_csv(io.StringIO(data["content"]))
    assert alert is None
    assert table["text"].tolist() == ['\'=HYPERLINK("https://e.x")']
    assert table["author"].tolist() == ["'+ci"]


def test_the_cli_csv_guards_its_cells(capsys):
    _emit([{"value": "=1+1", "hits": 3, "visitors": -1}], ("value", "hits", "visitors"), "csv")
    assert capsys.readouterr().out.splitlines() == ["value,hits,visitors", "'=1+1,3,-1"]
    _emit([{"value": "=1+1"}], ("value",), "json")               # JSON is data: unchanged
    assert capsys.readouterr().out.strip() == '[{"value": "=1+1"}]'
