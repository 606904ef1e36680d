"""Every visit figure the CLI prints (``report --metric visits|pageviews|bounce_rate|
visit_duration|views_per_visit``, ``breakdown --by entry_page|exit_page``) equals an
independent sessionization of the log (tests/oracle.py: its own parser, its own loop, its
own zone buckets), for the shared real log in zones a whole, half and three quarters of
an hour from UTC, and for a generated log across New York's change to summer time whose
visits run across midnight. The log is ingested as two files by two processes at once,
so one visitor's hits reach both: visits are still one."""

from __future__ import annotations

import csv
import datetime as dt
import io
import subprocess
import sys
from pathlib import Path
from zoneinfo import ZoneInfo

import oracle
import pytest
from click.testing import CliRunner

from dashboard.cli import main

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "apache_combined_2015.log"
pytestmark = pytest.mark.skipif(not SHARED.exists(), reason=f"{SHARED} is not there")
METRICS = ("visits", "pageviews", "bounce_rate", "visit_duration", "views_per_visit")


def _ingest_in_two_processes(folder: Path, lines: list[str]) -> str:
    """The lines dealt into two files (a second to each in turn: a visitor's hits land
    in both, and the requests of one second keep their order in one file), ingested by
    two ``hitboard ingest`` processes at once."""
    store = str(folder / "store")
    parts: list[list[str]] = [[], []]
    seconds: dict[str, int] = {}
    for line in lines:
        stamp = line.partition("[")[2].partition("]")[0]
        parts[seconds.setdefault(stamp, len(seconds) % 2)].append(line)
    paths = []
    for part, its in enumerate(parts):
        path = folder / f"part{part}.log"
        path.write_text("\n".join(its) + "\n")
        paths.append(path)
    runs = [subprocess.Popen([sys.executable, "-m", "dashboard.cli", "ingest", str(path),
                              "--site", "logs", "--store", store],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            for path in paths]
    for run in runs:
        assert run.wait(timeout=300) == 0, run.stderr.read()
    # each ingest's final rollup ran while the other was still writing: one more run
    assert CliRunner().invoke(main, ["rollup", "--store", store]).exit_code == 0
    return store


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    lines = SHARED.read_text().splitlines()
    return _ingest_in_two_processes(tmp_path_factory.mktemp("visits"), lines), \
        oracle.pageviews(lines)


@pytest.fixture(scope="module")
def dst(tmp_path_factory):
    lines = oracle.generated_log()
    return _ingest_in_two_processes(tmp_path_factory.mktemp("dst"), lines), \
        oracle.pageviews(lines)


def _report(store, metric, granularity, start, end, tz, *extra) -> list[dict]:
    result = CliRunner().invoke(main, [
        "report", "--site", "logs", "--metric", metric, "--granularity", granularity,
        "--start", start, "--end", end, "--tz", tz, "--store", store, *extra])
    assert result.exit_code == 0, result.output
    return list(csv.DictReader(io.StringIO(result.stdout)))


def _shown(value: str) -> float | None:
    return None if value == "" else float(value)


def _close(shown: float | None, exact: float | None) -> bool:
    if exact is None:
        return shown is None
    return shown is not None and abs(shown - exact) <= 0.005 + 1e-9


def _check(found, views, granularity, start, end, tz):
    zone = ZoneInfo(tz)
    expected = oracle.visit_metrics(views, oracle.local(start, zone),
                                    oracle.local(end, zone), granularity, zone)
    for metric in METRICS:
        rows = _report(found, metric, granularity, start, end, tz)
        shown = {dt.datetime.fromisoformat(r["time"]).astimezone(dt.UTC): _shown(r[metric])
                 for r in rows}
        for when, value in shown.items():
            exact = expected.get(when, {}).get(metric)
            if exact is None and metric in ("visits", "pageviews"):
                exact = 0
            assert _close(value, exact), (metric, tz, granularity, when, value, exact)
        assert set(expected) <= set(shown)


@pytest.mark.parametrize("tz", ["UTC", "Asia/Kolkata", "Asia/Kathmandu", "America/St_Johns"])
def test_visits_per_hour_and_day_equal_an_independent_count(shared, tz):
    store, views = shared
    _check(store, views, "day", "2015-05-16", "2015-05-22", tz)
    _check(store, views, "hour", "2015-05-19", "2015-05-20", tz)


def test_visits_across_midnight_and_a_dst_change_equal_an_independent_count(dst):
    store, views = dst
    for tz in ("America/New_York", "UTC"):
        _check(store, views, "day", "2026-03-06", "2026-03-11", tz)
        _check(store, views, "hour", "2026-03-08", "2026-03-09", tz)


def test_entry_and_exit_pages_equal_an_independent_count(shared):
    store, views = shared
    found = oracle.visits(views)
    for by, key in (("entry_page", "entry"), ("exit_page", "exit")):
        result = CliRunner().invoke(main, [
            "breakdown", "--site", "logs", "--by", by, "--start", "2015-05-16",
            "--end", "2015-05-22", "-n", "10000", "--store", store])
        assert result.exit_code == 0, result.output
        rows = {r["value"]: r for r in csv.DictReader(io.StringIO(result.stdout))}
        expected: dict[str, list] = {}
        for visit in found:
            expected.setdefault(visit[key], []).append(visit)
        assert set(rows) == set(expected)
        for page, its in expected.items():
            row = rows[page]
            assert int(row["visits"]) == len(its)
            assert _close(float(row["bounce_rate"]),
                          100 * sum(v["views"] == 1 for v in its) / len(its))
            assert _close(float(row["visit_duration"]),
                          sum(v["seconds"] for v in its) / len(its))


def test_a_page_s_pageviews_and_the_visits_entering_there(shared):
    store, views = shared
    page = "/projects/xdotool/"
    entering = [v for v in oracle.visits(views) if v["entry"] == page]
    rows = _report(store, "visits", "day", "2015-05-16", "2015-05-22", "UTC", "--page", page)
    assert sum(int(r["visits"]) for r in rows) == len(entering)
    assert {r["page"] for r in rows} == {page}
    rows = _report(store, "pageviews", "day", "2015-05-16", "2015-05-22", "UTC",
                   "--page", page)
    assert sum(int(r["pageviews"]) for r in rows) == sum(v.page == page for v in views)
