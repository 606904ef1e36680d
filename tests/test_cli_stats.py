"""hitboard report / top / preallocate / indexes: output, read-only access to a store a
server holds, data recorded by one process reported by a later one, and bad input."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import queries
from dashboard.cli import main
from queries.stats import schema

HITBOARD = str(Path(sys.executable).with_name("hitboard"))
RECORD = """
import datetime as dt, sys
import queries
db = queries.connect(sys.argv[1])
queries.ensure_indexes(db)
with queries.HitRecorder(db) as recorder:
    recorder.record("site-1", "/a.b", dt.datetime(2026, 3, 28, 23, 30, tzinfo=dt.UTC), n=2)
    recorder.record("site-1", "/$c", dt.datetime(2026, 3, 29, 1, 15, tzinfo=dt.UTC))
db.client.close()
"""


def _run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([HITBOARD, *args], capture_output=True, text=True, timeout=60,
                          env={k: v for k, v in os.environ.items() if k != "HITBOARD_STORE"})


@pytest.fixture
def recorded(tmp_path) -> str:
    """A store written by another process that has exited."""
    store = str(tmp_path / "store")
    subprocess.run([sys.executable, "-c", textwrap.dedent(RECORD), store], check=True,
                   timeout=60)
    return store


def test_report_in_a_later_process(recorded):
    result = _run("report", "--store", recorded, "--site", "site-1", "--granularity", "hour",
                  "--start", "2026-03-29", "--end", "2026-03-29T04:00", "--tz", "Europe/Paris")
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert rows == [
        {"time": "2026-03-29T00:00:00+01:00", "page": "*", "hits": "2"},
        {"time": "2026-03-29T01:00:00+01:00", "page": "*", "hits": "0"},
        {"time": "2026-03-29T03:00:00+02:00", "page": "*", "hits": "1"},
    ]


def test_report_json_several_pages_while_a_server_holds_the_store(recorded):
    holder = queries.connect(recorded)  # a running server in this process holds the lock
    try:
        result = _run("report", "--store", recorded, "--site", "site-1", "--page", "a.b",
                      "--page", "/$c", "--granularity", "day", "--start", "2026-03-28",
                      "--end", "2026-03-30", "--format", "json")
    finally:
        holder.client.close()
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [
        {"time": "2026-03-28T00:00:00+00:00", "page": "/a.b", "hits": 2},
        {"time": "2026-03-28T00:00:00+00:00", "page": "/$c", "hits": 0},
        {"time": "2026-03-29T00:00:00+00:00", "page": "/a.b", "hits": 0},
        {"time": "2026-03-29T00:00:00+00:00", "page": "/$c", "hits": 1},
    ]


def test_top(recorded):
    result = _run("top", "--store", recorded, "--site", "site-1", "--start", "2026-03-01",
                  "--end", "2026-04-01", "-n", "5", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [{"page": "/a.b", "hits": 2}, {"page": "/$c", "hits": 1}]


def test_preallocate_and_indexes(tmp_path):
    store = str(tmp_path / "store")
    runner = CliRunner()
    result = runner.invoke(main, ["preallocate", "--store", store, "--site", "s1", "--page",
                                  "/a", "--page", "b.c", "--day", "2026-12-01"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(main, ["indexes", "--store", store])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "stats.daily\tsite_page_date\tmetadata.site:1, metadata.page:1, metadata.date:1" \
        in lines
    assert any(line.startswith("stats.monthly\tsite_page_date\t") for line in lines)
    db = queries.connect(store, read_only=True)
    try:
        ids = sorted(d["_id"] for d in db[schema.DAILY].find({}, {"_id": 1}))
        assert ids == ["20261201/s1*", "20261201/s1/a", "20261201/s1/b.c"]
        assert db[schema.DAILY].find_one({"_id": "20261201/s1/a"})["daily"] == 0
    finally:
        db.client.close()


BAD = [
    (["report", "--site", "bad site", "--granularity", "day", "--start", "2026-01-01",
      "--end", "2026-01-02"], "invalid site"),
    (["report", "--site", "s", "--page", "/" + "p" * 2048, "--granularity", "day",
      "--start", "2026-01-01", "--end", "2026-01-02"], "at most 2048"),
    (["report", "--site", "s", "--page", "/a\x01\x00", "--granularity", "day",
      "--start", "2026-01-01", "--end", "2026-01-02"], "control character"),
    (["report", "--site", "s", "--granularity", "minute", "--start", "2025-01-01",
      "--end", "2026-03-01"], "400 days"),
    (["report", "--site", "s", "--granularity", "hour", "--start", "2026-01-02",
      "--end", "2026-01-01"], "not after start"),
    (["report", "--site", "s", "--granularity", "hour", "--start", "2026-01-01",
      "--end", "2026-01-02", "--tz", "Mars/Base"], "unknown time zone"),
    (["report", "--site", "s", "--granularity", "hour", "--start", "soon",
      "--end", "2026-01-02"], "ISO 8601"),
    (["top", "--site", "s", "--start", "2026-01-01", "--end", "2026-01-01"], "not after"),
    (["preallocate", "--site", "s", "--page", "/a", "--day", "2026-13-01"], "YYYY-MM-DD"),
    (["preallocate", "--site", "s/", "--page", "/a"], "invalid site"),
]


@pytest.mark.parametrize("args, message", BAD, ids=[m for _, m in BAD])
def test_bad_input_exits_2_without_traceback(tmp_path, args, message):
    result = CliRunner().invoke(main, [*args, "--store", str(tmp_path / "store")])
    assert result.exit_code == 2
    assert "Error: " in result.output and message in result.output
    assert "Traceback" not in result.output


def test_bad_input_in_a_real_process(tmp_path):
    result = _run("report", "--store", str(tmp_path / "s"), "--site", "s", "--granularity",
                  "day", "--start", "2026-01-01T00:00", "--end", "2026-01-01T00:00")
    assert result.returncode == 2
    assert result.stderr.startswith("Error: empty range") and "Traceback" not in result.stderr


def test_writing_commands_run_beside_a_process_holding_the_store(tmp_path):
    store = str(tmp_path / "store")
    holder = queries.connect(store)
    try:
        holder.counters.insert_one({"_id": "held"})
        result = _run("indexes", "--store", store)
        assert result.returncode == 0, result.stderr
        assert "site_end" in holder[schema.EVENTS].index_information()
    finally:
        holder.client.close()


def test_the_cli_loads_neither_dash_nor_plotly():
    """Only `hitboard serve` needs the dashboard: the other commands start faster without."""
    code = ("import sys\nfrom click.testing import CliRunner\nfrom dashboard.cli import main\n"
            "assert CliRunner().invoke(main, ['report', '--help']).exit_code == 0\n"
            "assert CliRunner().invoke(main, ['shard-plan', '--help']).exit_code == 0\n"
            "print(sorted(m for m in ('dash', 'plotly') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_report_counts_people_and_a_filter_as_history_does(tmp_path):
    """``--humans`` leaves the sample's 15 Googlebot hits out; ``--filter`` counts one
    referrer's hits (the whole site, per hour at the finest); a bad filter is one line."""
    from dimkit import BOTS, NEWS, TOTAL, ingest_sample

    store = str(tmp_path / "store")
    db = queries.connect(store)
    queries.ensure_indexes(db)
    start = ingest_sample(db, "s", tmp_path)
    db.client.close()
    day = ["--start", f"{start:%Y-%m-%d}", "--end", f"{start.date() + dt.timedelta(days=1)}"]

    def total(*args) -> int:
        result = CliRunner().invoke(main, ["report", "--store", store, "--site", "s",
                                           "--granularity", "hour", *day, *args])
        assert result.exit_code == 0, result.output
        return sum(int(row["hits"]) for row in csv.DictReader(io.StringIO(result.stdout)))

    assert total() == TOTAL and total("--humans") == TOTAL - BOTS
    assert total("--filter", "referrer:news.example", "--humans") == NEWS
    assert total("--filter", "bot:bot") == BOTS
    for bad in ("nope:x", "referrer", "referrer:"):
        result = CliRunner().invoke(main, ["report", "--store", store, "--site", "s",
                                           "--granularity", "hour", *day, "--filter", bad])
        assert result.exit_code == 2 and result.output.startswith("Error: ")
        assert len(result.output.strip().splitlines()) == 1
