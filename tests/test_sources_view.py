"""The Sources page without a browser: the range from the URL, the words around the
figures (``dashboard/pages/sources/view.py``) and its pieces (``components/sources.py``)."""

import datetime as dt
import json

import pandas as pd

from components.sources import source_cards, source_table
from dashboard.pages.sources import view
from queries.reads.sources import FIGURES, Comparison

NOW = dt.datetime(2026, 3, 18, 12, 30, tzinfo=dt.UTC)


def _found(primary="log", **totals) -> Comparison:
    figures = dict.fromkeys(FIGURES, 0) | totals
    return Comparison(pd.DataFrame(columns=["day", "page", *FIGURES]), figures, None,
                      primary, 0)


def test_the_range_comes_from_the_url_and_a_bad_one_is_the_default():
    assert view.days_of({"days": ["30"]}) == "30"
    assert view.days_of({"days": ["9999"]}) == view.days_of({}) == "7"
    assert view.span("1", "Asia/Kolkata", NOW) == (
        dt.datetime(2026, 3, 17, 18, 30, tzinfo=dt.UTC), NOW)


def test_the_words_say_what_is_counted_and_what_is_missing():
    assert "counters count its beacon; its log hits are kept apart" in view.summary(
        "s", _found("beacon"), 30)
    assert "load generator" in view.summary("s", _found("generator"), 30)
    assert view.summary("s", _found("log"), 30, ("/a", "/b")).endswith(
        "Only /a, /b, as chosen above.")
    assert "chosen" not in view.summary("s", _found("log"), 30)
    assert "Neither" in view.empty_words(_found())
    assert "tracking tag" in view.empty_words(_found(log_pageviews=3))
    assert "access log" in view.empty_words(_found(beacon_pageviews=3))
    assert view.empty_words(_found(log_pageviews=3, beacon_pageviews=2)) is None


def test_the_cards_and_the_table():
    cards = source_cards(dict.fromkeys(FIGURES, 0) | {"log_pageviews": 1234}, 0.25)
    texts = {card.children[1].id: card.children[1].children for card in cards}
    assert texts["sources-kpi-log"] == "1,234" and texts["sources-kpi-share"] == "25.0 %"
    assert {c.children[1].children for c in source_cards(dict.fromkeys(FIGURES, 0), None)
            if c.children[1].id == "sources-kpi-share"} == {"–"}
    rows = pd.DataFrame([(dt.date(2026, 3, 17), "/<b>", 3, 2, 1, 0, 0, 1)],
                        columns=["day", "page", *FIGURES])
    spec = json.loads(source_table(rows).to_plotly_json()["props"]["data-table"])
    assert [c["t"] for c in spec["rows"][0]] == [["2026-03-17"], ["/<b>"], ["3"], ["2"],
                                                 ["1"], ["0"], ["0"], ["1"]]
