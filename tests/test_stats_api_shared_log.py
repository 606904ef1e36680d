"""The Stats API on the shared real log, called with an API key, equals the CLI's own
figures (issue 47, "Done when"): ``hits`` is ``report --humans`` summed over the same
days; pageviews, visits, bounce rate and visit duration are ``report --metric ...``;
each dimension is ``breakdown --by ...``. A key of another site is refused, saying
nothing of the site. One store, built once."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from pathlib import Path

import pytest
import time_machine
from click.testing import CliRunner
from dashkit import dashboard_app

import queries
from dashboard.cli import main
from queries.accounts import keys
from queries.stats.sites import update_site

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "apache_combined_2015.log"
pytestmark = pytest.mark.skipif(not SHARED.exists(), reason=f"{SHARED} is not there")
SITE = "logs"
NOW = dt.datetime(2015, 5, 21, 12, tzinfo=dt.UTC)     # after the log's last line
DAYS = ("2015-05-17", "2015-05-20")                    # the log's days, both inclusive
START, END = "2015-05-17", "2015-05-21"                # the same days for the CLI
TZ = "Asia/Kolkata"                                    # the site's zone: days cut hours
# The API's dimension -> breakdown's --by.
COUNTED = {"event:page": "page", "visit:source": "referrer", "http:status": "status",
           "visit:browser": "browser", "visit:os": "os", "visit:device": "device",
           "visit:country": "country", "http:bot": "bot", "visit:utm_source": "utm_source",
           "visit:utm_medium": "utm_medium", "visit:utm_campaign": "utm_campaign"}
VISIT_PAGES = {"visit:entry_page": "entry_page", "visit:exit_page": "exit_page"}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The log ingested as ``hitboard ingest`` does, the site's zone set, a key of the
    site and a key of another; the server's test client, the store, and the keys."""
    folder = tmp_path_factory.mktemp("api")
    store = str(folder / "store")
    with time_machine.travel(NOW, tick=False):
        ingested = CliRunner().invoke(main, ["ingest", str(SHARED), "--site", SITE,
                                             "--store", store])
        assert ingested.exit_code == 0, ingested.output
        db = queries.connect(store)
        update_site(db, SITE, tz=TZ)
        mine, theirs = keys.create(db, "mine", [SITE]), keys.create(db, "theirs", ["other"])
        db.client.close()
    with time_machine.travel(NOW, tick=False), dashboard_app(store, rollup_interval=0) as app:
        yield app.server.test_client(), store, mine, theirs


def ask(served, body: dict, key: str | None = None) -> tuple[int, dict]:
    client, _, mine, _ = served
    answer = client.post("/api/v2/query", data=json.dumps(body),
                         content_type="application/json",
                         headers={"Authorization": f"Bearer {key or mine}"})
    return answer.status_code, answer.get_json()


def rows(served, body: dict) -> list[tuple[list, list]]:
    status, found = ask(served, {"site_id": SITE, "date_range": list(DAYS), **body})
    assert status == 200, found
    return [(r["dimensions"], r["metrics"]) for r in found["results"]]


def cli(served, *args: str) -> list[dict]:
    store = served[1]
    result = CliRunner().invoke(main, [*args, "--site", SITE, "--start", START, "--end", END,
                                       "--tz", TZ, "--store", store])
    assert result.exit_code == 0, result.output
    return list(csv.DictReader(io.StringIO(result.stdout)))


def number(text: str) -> float | None:
    return None if text == "" else float(text)


def test_hits_are_report_humans_summed_over_the_same_days(served):
    reported = cli(served, "report", "--granularity", "day", "--humans")
    per_day = {r["time"][:10]: int(r["hits"]) for r in reported}
    assert sum(per_day.values()) > 5000
    assert rows(served, {"metrics": ["hits"]}) == [([], [sum(per_day.values())])]
    assert rows(served, {"metrics": ["hits"], "dimensions": ["time:day"]}) == \
        [([day], [hits]) for day, hits in per_day.items()]


def test_visit_metrics_are_report_metric(served):
    metrics = ["pageviews", "visits", "bounce_rate", "visit_duration"]
    by_day = rows(served, {"metrics": metrics, "dimensions": ["time:day"]})
    for i, metric in enumerate(metrics):
        reported = cli(served, "report", "--granularity", "day", "--metric", metric)
        assert [(day, values[i]) for (day,), values in by_day] == \
            [(r["time"][:10], number(r[metric])) for r in reported], metric
    (_, totals), = rows(served, {"metrics": ["pageviews", "visits"]})
    assert totals == [sum(v[0] for _, v in by_day), sum(v[1] for _, v in by_day)]
    assert totals[1] > 1000


def test_each_dimension_is_breakdown(served):
    for dimension, by in COUNTED.items():
        expected = [([r["value"]], [int(r["hits"]), int(r["visitors"])])
                    for r in cli(served, "breakdown", "--by", by, "-n", "10000")]
        assert rows(served, {"metrics": ["hits", "visitors"],
                             "dimensions": [dimension]}) == expected, dimension
    for dimension, by in VISIT_PAGES.items():
        expected = [([r["value"]], [int(r["visits"]), number(r["bounce_rate"]),
                                    number(r["visit_duration"])])
                    for r in cli(served, "breakdown", "--by", by, "-n", "10000")]
        assert len(expected) > 100
        assert rows(served, {"metrics": ["visits", "bounce_rate", "visit_duration"],
                             "dimensions": [dimension]}) == expected, dimension


def test_another_site_s_key_is_refused_saying_nothing_of_the_site(served):
    theirs = served[3]
    body = {"site_id": SITE, "metrics": ["hits"], "date_range": list(DAYS)}
    refused = ask(served, body, theirs)
    unknown = ask(served, {**body, "site_id": "no-such-site"}, theirs)
    assert refused[0] == unknown[0] == 403
    assert refused[1] == unknown[1] and "hits" not in json.dumps(refused[1])


def test_time_beside_a_dimension_is_each_day_s_breakdown(served):
    """``["time:day", dim]`` from the counters: each day's rows are that day's one
    dimension (itself ``breakdown --by``), in either order of the two."""
    grid = rows(served, {"metrics": ["hits", "visitors"],
                         "dimensions": ["time:day", "visit:browser"]})
    days = sorted({day for (day, _), _ in grid})
    assert len(days) == 4
    for day in days:
        status, alone = ask(served, {"site_id": SITE, "date_range": [day, day],
                                     "metrics": ["hits", "visitors"],
                                     "dimensions": ["visit:browser"]})
        assert status == 200
        assert [([v], m) for (d, v), m in grid if d == day] == \
            [(r["dimensions"], r["metrics"]) for r in alone["results"]] != []
    flipped = rows(served, {"metrics": ["visits", "bounce_rate"],
                            "dimensions": ["visit:entry_page", "time:day"]})
    assert {d for (_, d), _ in flipped} == set(days)
    status, answer = ask(served, {"site_id": SITE, "date_range": list(DAYS),
                                  "metrics": ["hits"], "dimensions": ["time:day", "event:page"]})
    assert status == 200 and answer["meta"]["source"] == "counters"
    assert sum(r["metrics"][0] for r in answer["results"]) == \
        sum(m[0] for _, m in rows(served, {"metrics": ["hits"]}))


def test_two_dimensions_and_filters_beside_a_dimension_come_from_raw_events(served):
    (_, [total]), = rows(served, {"metrics": ["hits"]})
    by_country = dict((d[0], m[0]) for d, m in rows(served, {
        "metrics": ["hits"], "dimensions": ["visit:country"]}))
    status, grid = ask(served, {"site_id": SITE, "date_range": list(DAYS), "metrics": ["hits"],
                                "dimensions": ["visit:country", "visit:browser"]})
    assert status == 200 and grid["meta"]["source"] == "raw events"
    summed: dict[str, int] = {}
    for row in grid["results"]:
        summed[row["dimensions"][0]] = summed.get(row["dimensions"][0], 0) + \
            row["metrics"][0]
    assert summed == by_country and sum(summed.values()) == total
    some = {"filters": [["contains", "event:page", ["/presentations/"]]]}
    per_day = rows(served, {"metrics": ["hits"], "dimensions": ["time:day"], **some})
    grid = rows(served, {"metrics": ["hits"], "dimensions": ["time:day", "http:status"],
                         **some})
    assert [(d, sum(m[0] for (g, _), m in grid if g == d)) for (d,), _ in per_day] == \
        [(d, m[0]) for (d,), m in per_day] and sum(m[0] for _, m in per_day) > 100


def test_page_filters_answer_pageviews_and_entry_pages_answer_visits(served):
    """``pageviews`` under an ``event:page`` filter is ``report --page --metric
    pageviews``; visits under a ``visit:entry_page`` filter are that entry page's
    ``breakdown`` row; several values, ``contains``, days and totals agree."""
    top, second = (r["value"] for r in cli(served, "breakdown", "--by", "entry_page",
                                            "-n", "2"))
    reported = cli(served, "report", "--granularity", "day", "--metric", "pageviews",
                   "--page", top)
    by_day = rows(served, {"metrics": ["pageviews", "hits"], "dimensions": ["time:day"],
                           "filters": [["is", "event:page", [top]]]})
    assert [(d, m[0]) for (d,), m in by_day] == \
        [(r["time"][:10], int(r["pageviews"])) for r in reported]
    assert all(m[1] >= m[0] for _, m in by_day)
    (_, [everything]), = rows(served, {"metrics": ["pageviews"]})
    (_, [anywhere]), = rows(served, {"metrics": ["pageviews"],
                                     "filters": [["contains", "event:page", ["/"]]]})
    assert anywhere == everything > 1000
    entries = {r["value"]: r for r in cli(served, "breakdown", "--by", "entry_page",
                                           "-n", "10000")}
    metrics = ["visits", "bounce_rate", "visit_duration"]
    (_, one), = rows(served, {"metrics": metrics,
                              "filters": [["is", "visit:entry_page", [top]]]})
    assert one == [int(entries[top]["visits"]), number(entries[top]["bounce_rate"]),
                   number(entries[top]["visit_duration"])]
    (_, [both]), = rows(served, {"metrics": ["visits"],
                                 "filters": [["is", "visit:entry_page", [top, second]]]})
    assert both == int(entries[top]["visits"]) + int(entries[second]["visits"])
    days = rows(served, {"metrics": ["visits"], "dimensions": ["time:day"],
                         "filters": [["is", "visit:entry_page", [top, second]]]})
    assert sum(m[0] for _, m in days) == both


def test_pageviews_under_any_filter_are_the_visits_pageviews(served):
    """Pageviews counted from raw events (a filter no page dimension holds, a dimension
    beside it) equal those the visits' documents hold, day by day."""
    by_day = rows(served, {"metrics": ["pageviews"], "dimensions": ["time:day"]})
    everyone = [["not", ["is", "visit:os", ["no such os"]]]]
    status, found = ask(served, {"site_id": SITE, "date_range": list(DAYS),
                                 "metrics": ["hits", "pageviews"], "dimensions": ["time:day"],
                                 "filters": everyone})
    assert status == 200 and found["meta"]["source"] == "raw events"
    assert [(r["dimensions"], r["metrics"][1]) for r in found["results"]] == \
        [(d, m[0]) for d, m in by_day] and sum(m[0] for _, m in by_day) > 1000
    assert all(r["metrics"][0] > r["metrics"][1] for r in found["results"])
    by_os = rows(served, {"metrics": ["pageviews"], "dimensions": ["visit:os"],
                          "filters": everyone})
    grid = rows(served, {"metrics": ["pageviews"], "dimensions": ["visit:os", "time:day"]})
    assert sum(m[0] for _, m in by_os) == sum(m[0] for _, m in grid) == \
        sum(m[0] for _, m in by_day)
    (_, [windows]), = rows(served, {"metrics": ["pageviews"],
                                    "filters": [["is", "visit:os", ["Windows"]]]})
    assert windows == dict((d[0], m[0]) for d, m in by_os)["Windows"] > 0
