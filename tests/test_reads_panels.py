"""queries.reads.panels: which representation answers a view's panels, and the bots'
share, checked against the sample log's own counts (``dimkit``)."""

import datetime as dt

import pytest
from dimkit import BOTS, LINES, NEWS, TOTAL, ingest_sample

from queries.reads.panels import bot_share, breakdowns

pytestmark = pytest.mark.usefixtures("frozen_clock")


@pytest.fixture
def day(db, tmp_path):
    start = ingest_sample(db, "s", tmp_path)
    return start, start + dt.timedelta(days=1)


def test_without_a_filter_the_counters_answer_every_range(db, day):
    found = breakdowns(db, "s", *day, "UTC", ("status", "referrer"))
    assert found.events_hits is None and found.source is None
    status = dict(zip(found.frames["status"]["value"], found.frames["status"]["hits"],
                      strict=True))
    people = [line for line in LINES if "Googlebot" not in line[4]]
    assert sum(status.values()) == sum(n for n, *_ in people) == TOTAL - BOTS
    assert status.get("404", 0) == sum(n for n, _, code, *_ in people if code == 404)
    assert "/style.css" not in set(found.frames["page"]["value"])
    assert list(found.not_found["path"]) == ["/missing"]
    everyone = breakdowns(db, "s", *day, "UTC", ("status",), humans=False, assets=True)
    assert int(everyone.frames["status"]["hits"].sum()) == TOTAL
    assert "/style.css" in set(everyone.frames["page"]["value"])


def test_a_filter_is_answered_by_raw_events_and_says_so(db, day):
    found = breakdowns(db, "s", *day, "UTC", ("browser",), ("referrer", "news.example"))
    assert found.events_hits == NEWS and "raw events" in found.source
    assert found.frames["browser"].to_dict("records") == [
        {"value": "Chrome", "hits": NEWS, "visitors": NEWS}]
    assert list(found.frames["page"]["value"]) == ["/"]


def test_the_bots_share_is_the_sites_or_the_filtered_hits(db, day):
    assert bot_share(db, "s", *day) == BOTS / TOTAL
    assert bot_share(db, "s", *day, ("referrer", "news.example")) == 0.0
    assert bot_share(db, "s", *day, ("bot", "bot")) == 1.0
    empty = day[1], day[1] + dt.timedelta(days=1)
    assert bot_share(db, "s", *empty) == 0.0
