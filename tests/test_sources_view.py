"""The Sources page without a browser: the range from the URL, the words around the
figures (``dashboard/pages/sources/view.py``) and its pieces (``components/sources.py``)."""

import datetime as dt
import json

import pandas as pd
import pytest

from components.sources import source_cards, source_table
from dashboard.pages.sources import view
from dashboard.state import parse_search
from queries.errors import HitboardError
from queries.reads.sources import FIGURES, Comparison

NOW = dt.datetime(2026, 3, 18, 12, 30, tzinfo=dt.UTC)


def _found(primary="log", **totals) -> Comparison:
    figures = dict.fromkeys(FIGURES, 0) | totals
    return Comparison(pd.DataFrame(columns=["day", "page", *FIGURES]), figures, None,
                      primary, 0)


def test_the_range_comes_from_the_url_as_history_writes_it():
    """Any range History offers (Sources offered only today, 7 and 30 days); a link of
    then still opens its days, a bad range the site's opening one."""
    assert view.Range.from_query({"range": ["90d"]}, "7d") == view.Range("90d")
    assert view.Range.from_query({"days": ["30"]}, "7d").preset == "30d"
    assert view.Range.from_query({"days": ["9999"], "range": ["soon"]}, "all").preset == "all"
    custom = view.Range.from_query(parse_search("?range=custom&start=2019-06-01"
                                                "&end=2019-06-08"), "7d")
    assert view.bounds(custom, "Asia/Kolkata", NOW, None) == (
        dt.datetime(2019, 5, 31, 18, 30, tzinfo=dt.UTC),
        dt.datetime(2019, 6, 7, 18, 30, tzinfo=dt.UTC))
    assert view.bounds(view.Range("today"), "Asia/Kolkata", NOW, None) == (
        dt.datetime(2026, 3, 17, 18, 30, tzinfo=dt.UTC), NOW)
    with pytest.raises(HitboardError):
        view.bounds(view.Range("custom", "2019-06-01"), "UTC", NOW, None)


def test_a_site_whose_logs_are_from_2019_opens_on_them():
    span = (dt.datetime(2019, 6, 1, tzinfo=dt.UTC), dt.datetime(2019, 6, 3, tzinfo=dt.UTC))
    assert view.opening(span, NOW, "UTC") == "all"
    assert view.opening(None, NOW, "UTC") == "7d"
    start, end = view.bounds(view.Range("all"), "UTC", NOW, span)
    assert (start, end) == (span[0], dt.datetime(2019, 6, 4, tzinfo=dt.UTC))
    assert view.picker_dates(start, end, "UTC") == ("2019-06-01", "2019-06-03")
    assert view.picked("2019-06-01", "2019-06-03T00:00:00") == {"start": "2019-06-01",
                                                                "end": "2019-06-04"}
    assert view.picked(None, "2019-06-03") is None and view.picked("x", "y") is None


def test_the_words_name_a_site_fed_by_the_load_generator():
    assert "fed by the load generator" in view.summary("shop.example", _found("generator"),
                                                         30)
    assert "Nothing has fed" in view.summary("s", _found(None), 30)
    assert view.empty_words(_found("generator")) is None     # the summary said it all


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
