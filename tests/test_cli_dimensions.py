"""hitboard breakdown / visitors / report --metric visitors: output and bad input."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from pathlib import Path

import clikit
import logkit
import pytest
from click.testing import CliRunner

from dashboard.cli import main

CHROME = ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
          "Chrome/126.0 Safari/537.36")
LINES = [
    f'8.8.8.8 - - [14/Mar/2026:09:00:00 +0000] "GET /?utm_source=$news.x HTTP/1.1" 200 10 '
    f'"https://news.example/a" "{CHROME}"',
    f'8.8.8.8 - - [14/Mar/2026:09:01:00 +0000] "GET /b HTTP/1.1" 404 10 "-" "{CHROME}"',
    '2001:4860::1 - - [14/Mar/2026:23:30:00 +0000] "GET /b HTTP/1.1" 404 10 "not a url" '
    '"curl/8.5.0"',
    '10.0.0.1 - - [15/Mar/2026:00:30:00 +0000] "GET /c.css HTTP/1.1" 200 10 "-" '
    f'"{CHROME}{"x" * 10_000}"',
]


def _ingested(tmp: Path) -> str:
    log = tmp / "access.log"
    log.write_text("\n".join(LINES) + "\n")
    runner = CliRunner()
    result = runner.invoke(main, ["ingest", str(log), "--site", "demo", "--store",
                                  str(tmp / "s")])
    assert result.exit_code == 0, result.output
    return str(tmp / "s")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """The log ingested once, for the tests that only read it."""
    return _ingested(tmp_path_factory.mktemp("dimensions"))


@pytest.fixture
def own_store(tmp_path):
    """The log ingested into a test's own store, which it compacts."""
    return _ingested(tmp_path)


def _invoke(*args):
    return CliRunner().invoke(main, list(args))


def test_breakdown_csv_and_json(store):
    result = _invoke("breakdown", "--site", "demo", "--by", "status", "--start", "2026-03-14",
                     "--end", "2026-03-16", "--bots", "--store", store)
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.output)))
    assert [(r["value"], r["hits"], r["visitors"]) for r in rows] == [
        ("200", "2", "2"), ("404", "2", "2")]
    result = _invoke("breakdown", "--site", "demo", "--by", "utm_source", "--start",
                     "2026-03-14", "--end", "2026-03-16", "--format", "json", "-n", "1",
                     "--bots", "--store", store)
    assert json.loads(result.output) == [{"value": "(none)", "hits": 3, "visitors": 3,
                                          "visitors_error": 0}]
    result = _invoke("breakdown", "--site", "demo", "--by", "country", "--start",
                     "2026-03-14T11:00", "--end", "2026-03-15T10:00", "--tz", "Europe/Paris",
                     "--bots", "--store", store)
    rows = {r["value"]: int(r["hits"]) for r in csv.DictReader(io.StringIO(result.output))}
    assert rows == {"US": 1, "unknown": 1}     # 09:00 and 09:01 UTC are before


def test_breakdown_counts_humans_unless_bots_are_asked_for(store):
    args = ("breakdown", "--site", "demo", "--by", "status", "--start", "2026-03-14",
            "--end", "2026-03-16", "--store", store)
    humans = {r["value"]: int(r["hits"]) for r in csv.DictReader(io.StringIO(
        _invoke(*args).output))}
    everyone = {r["value"]: int(r["hits"]) for r in csv.DictReader(io.StringIO(
        _invoke(*args, "--bots").output))}
    assert humans == {"200": 2, "404": 1}      # curl's 404 is a bot's
    assert everyone == {"200": 2, "404": 2}
    pages = [(r["value"], int(r["hits"]), int(r["visitors"])) for r in csv.DictReader(
        io.StringIO(_invoke(*args[:4], "page", *args[5:]).output))]
    assert pages == [("/", 1, 1), ("/b", 1, 1), ("/c.css", 1, 1)]   # curl's /b left out


def test_breakdown_of_one_page_notes_raw_events(store):
    result = _invoke("breakdown", "--site", "demo", "--by", "bot", "--page", "/b", "--start",
                     "2026-03-14", "--end", "2026-03-16", "--store", store)
    assert result.exit_code == 0
    assert "bot,1,1" in result.output and "human,1,1" in result.output
    assert "raw events" in result.output        # the note, on stderr (mixed here)


def test_visitors_and_report_metric(store):
    result = _invoke("visitors", "--site", "demo", "--start", "2026-03-14", "--end",
                     "2026-03-16", "--store", store)
    assert result.exit_code == 0 and result.output.strip() == "3"
    result = _invoke("report", "--site", "demo", "--metric", "visitors", "--granularity",
                     "day", "--start", "2026-03-14", "--end", "2026-03-16", "--store", store)
    rows = list(csv.DictReader(io.StringIO(result.output)))
    assert [(r["time"][:10], r["visitors"]) for r in rows] == [
        ("2026-03-14", "2"), ("2026-03-15", "1")]


def test_compact_visitors_keeps_the_counts(own_store):
    store = own_store
    result = _invoke("compact-visitors", "--before", "2026-04-01", "--store", store)
    assert result.exit_code == 0 and "merged" in result.output
    result = _invoke("visitors", "--site", "demo", "--start", "2026-03-14", "--end",
                     "2026-03-16", "--store", store)
    assert result.output.strip() == "3"
    bad = _invoke("compact-visitors", "--before", "yesterday", "--store", store)
    assert bad.exit_code == 2 and "Error: invalid day" in bad.output


@pytest.mark.parametrize("args, reason", [
    (["breakdown", "--site", "bad site", "--by", "os"], "invalid site"),
    (["breakdown", "--site", "demo", "--by", "os", "--tz", "Mars/Base"], "time zone"),
    (["visitors", "--site", "demo", "--end", "2026-03-13"], "empty range"),
    (["report", "--site", "demo", "--metric", "visitors", "--granularity", "minute"],
     "per hour or day"),
])
def test_bad_input_is_an_error_not_a_traceback(store, args, reason):
    if "--start" not in args:
        args = [*args, "--start", "2026-03-14"]
    if "--end" not in args:
        args = [*args, "--end", "2026-03-16"]
    result = _invoke(*args, "--store", store)
    assert result.exit_code == 2
    assert "Error:" in result.output and reason in result.output
    assert "Traceback" not in result.output


def test_a_value_without_visitors_is_an_empty_cell_not_a_traceback(tmp_path, frozen_clock):
    """Live traffic's counters ahead of its raw events (a hit counted, its event not yet
    written: a site the demo feeds) leave a page of the live hour without visitors (a
    nullable ``<NA>``, whose truth the CSV writer once tested)."""
    hour = frozen_clock.replace(minute=0, second=0, microsecond=0)
    seen = logkit.write_log(tmp_path / "seen.log", hour, [(n, n, "/a") for n in range(20)])
    late = logkit.write_log(tmp_path / "late.log", hour, [(99, 21, "/late")])
    store = str(tmp_path / "s")
    assert clikit.run(store, "ingest", str(seen), "--site", "demo").exit_code == 0
    assert clikit.run(store, "ingest", str(late), "--site", "demo",
                      "--no-events").exit_code == 0
    span = ("--site", "demo", "--start", hour.isoformat(),
            "--end", (hour + dt.timedelta(hours=1)).isoformat())
    assert clikit.rows(clikit.run(store, "breakdown", *span, "--by", "page")) == [
        {"value": "/a", "hits": "20", "visitors": "20", "visitors_error": "0"},
        {"value": "/late", "hits": "1", "visitors": "", "visitors_error": ""}]
    json_rows = json.loads(clikit.run(store, "breakdown", *span, "--by", "page", "--format",
                                      "json").stdout)
    assert json_rows[1] == {"value": "/late", "hits": 1, "visitors": None,
                            "visitors_error": None}


def test_visitors_counted_by_a_sketch_say_they_are_an_estimate(tmp_path, frozen_clock):
    """Past the few hundred a sketch keeps as a list, visitors are an estimate: the
    command says so with its interval, and a breakdown carries the error per value."""
    day = frozen_clock.replace(hour=0, minute=0, second=0, microsecond=0) - dt.timedelta(days=2)
    log = logkit.write_log(tmp_path / "many.log", day,
                           [(1, n % 1440, "/a", f"Agent/{n}") for n in range(3000)])
    store = str(tmp_path / "s")
    assert clikit.run(store, "ingest", str(log), "--site", "demo").exit_code == 0
    span = ("--site", "demo", "--start", day.isoformat(),
            "--end", (day + dt.timedelta(days=1)).isoformat())
    result = clikit.run(store, "visitors", *span)
    estimate = int(result.stdout)
    assert abs(estimate - 3000) < 300
    assert f"≈{estimate:,} ± " in result.stderr
    [row] = clikit.rows(clikit.run(store, "breakdown", *span, "--by", "page"))
    assert row["value"] == "/a" and row["hits"] == "3000"
    assert int(row["visitors_error"]) > 0


def test_visitors_counted_exactly_carry_no_note(store):
    result = clikit.run(store, "visitors", "--site", "demo", "--start", "2026-03-14",
                        "--end", "2026-03-16")
    assert result.stdout.strip() == "3" and "≈" not in result.stderr
