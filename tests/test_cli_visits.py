"""The visit metrics in the CLI (``dashboard/cli/visits.py``): what each prints on a
small log, and a clear one-line error for what they cannot answer."""

from __future__ import annotations

import datetime as dt

import pytest
from click.testing import CliRunner
from clikit import rows, run

from dashboard.cli import main

AGENT = "Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0"
# (address, minute, page): a visit of 3 pages over 20 minutes, a bounce, and a visit
# that began at 23:50 and runs past midnight.
LINES = [(1, 600, "/a"), (1, 610, "/b"), (1, 620, "/c"), (2, 700, "/a"),
         (3, 1430, "/b"), (3, 1450, "/a")]


@pytest.fixture
def store(tmp_path):
    log = tmp_path / "access.log"
    day = dt.datetime(2015, 5, 17, tzinfo=dt.UTC)
    log.write_text("".join(
        f'203.0.113.{who} - - [{day + dt.timedelta(minutes=minute):%d/%b/%Y:%H:%M:%S} '
        f'+0000] "GET {page} HTTP/1.1" 200 5 "-" "{AGENT}"\n'
        for who, minute, page in LINES))
    path = str(tmp_path / "store")
    result = CliRunner().invoke(main, ["ingest", str(log), "--site", "s", "--store", path])
    assert result.exit_code == 0, result.output
    return path


def test_each_metric_per_day_in_percent_and_seconds(store):
    span = ("--site", "s", "--granularity", "day", "--start", "2015-05-17",
            "--end", "2015-05-19")
    found = {metric: [r[metric] for r in rows(run(store, "report", *span, "--metric", metric))]
             for metric in ("visits", "pageviews", "bounce_rate", "visit_duration",
                            "views_per_visit")}
    assert found == {"visits": ["3", "0"], "pageviews": ["5", "1"],
                     "bounce_rate": ["33.33", ""], "visit_duration": ["800.0", ""],
                     "views_per_visit": ["2.0", ""]}
    entering = rows(run(store, "report", *span, "--metric", "visits", "--page", "/b"))
    assert [(r["page"], r["visits"]) for r in entering] == [("/b", "1"), ("/b", "0")]


def test_entry_and_exit_pages(store):
    found = rows(run(store, "breakdown", "--site", "s", "--by", "exit_page", "--start",
                     "2015-05-17", "--end", "2015-05-19"))
    assert found == [
        {"value": "/a", "visits": "2", "bounce_rate": "50.0", "visit_duration": "600.0"},
        {"value": "/c", "visits": "1", "bounce_rate": "0.0", "visit_duration": "1200.0"}]


@pytest.mark.parametrize(("args", "said"), [
    (["report", "--metric", "views_per_visit", "--page", "/a", "--granularity", "day"],
     "no --page"),
    (["report", "--metric", "visits", "--page", "/a", "--page", "/b", "--granularity",
      "day"], "one --page"),
    (["report", "--metric", "visits", "--filter", "referrer:x", "--granularity", "day"],
     "no --filter"),
    (["report", "--metric", "bounce_rate", "--granularity", "minute"], "not 'minute'"),
    (["breakdown", "--by", "entry_page", "--page", "/a"], "no --page"),
])
def test_what_visits_cannot_answer_is_one_line(store, args, said):
    result = run(store, *args, "--site", "s", "--start", "2015-05-17", "--end",
                 "2015-05-18")
    assert result.exit_code == 2 and result.output.startswith("Error: "), result.output
    assert said in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("minutes", ["0", "1441", "x"])
def test_a_visit_timeout_out_of_bounds_is_refused(store, minutes):
    run(store, "site", "add", "s")
    result = run(store, "site", "set", "s", "--visit-minutes", minutes)
    assert result.exit_code == 2 and "Error: " in result.output, result.output
    changed = run(store, "site", "set", "s", "--visit-minutes", "45")
    assert changed.exit_code == 0 and "visits end after 45 min" in changed.output
