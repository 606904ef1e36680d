"""``hitboard export`` then ``hitboard import`` into a new store: the same daily
pageviews, visits and visitors in ``report``; imported days added to day figures (never
to hours), left out with ``--no-imports``, and removed with the site's data."""

from __future__ import annotations

import datetime as dt
import shutil
import zipfile

import pytest
from click.testing import CliRunner
from clikit import rows, run

from dashboard.cli import main

AGENT = "Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0"
DAY = dt.datetime(2015, 5, 17, tzinfo=dt.UTC)
# (address, minutes from DAY's midnight, page, referrer) over three days, one visit
# running past a midnight.
LINES = [(1, 600, "/a", "https://news.example/x"), (1, 610, "/b", "-"), (2, 700, "/a", "-"),
         (3, 1430, "/b", "https://search.example/"), (3, 1450, "/a", "-"),
         (4, 1500, "/c", "-"), (5, 2900, "/a", "https://news.example/y"), (5, 2903, "/c", "-"),
         (6, 3000, "/b", "-")]
SPAN = ("--start", "2015-05-17", "--end", "2015-05-20")
METRICS = ("visitors", "visits", "pageviews", "bounce_rate")


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A store fed by a small log, and its three days exported."""
    tmp = tmp_path_factory.mktemp("export")
    log = tmp / "access.log"
    log.write_text("".join(
        f'203.0.113.{who} - - [{DAY + dt.timedelta(minutes=minute):%d/%b/%Y:%H:%M:%S} '
        f'+0000] "GET {page} HTTP/1.1" 200 5 "{referrer}" "{AGENT}"\n'
        for who, minute, page, referrer in LINES))
    store = str(tmp / "store")
    result = CliRunner().invoke(main, ["ingest", str(log), "--site", "s", "--store", store])
    assert result.exit_code == 0, result.output
    out = tmp / "s.zip"
    done = run(store, "export", "--site", "s", *SPAN, "--out", str(out))
    assert done.exit_code == 0, done.output
    return store, out


def daily(store: str, metric: str, *more: str) -> list[tuple[str, str]]:
    found = rows(run(store, "report", "--site", "s", "--granularity", "day", *SPAN,
                     "--metric", metric, *more))
    return [(r["time"], r[metric]) for r in found]


def test_the_archive_is_plausibles_layout(exported):
    _, out = exported
    with zipfile.ZipFile(out) as zipped:
        names = sorted(zipped.namelist())
        visitors = zipped.read("imported_visitors_20150517_20150519.csv").decode()
        sources = zipped.read("imported_sources_20150517_20150519.csv").decode()
    assert len(names) == 10 and all(n.endswith("_20150517_20150519.csv") for n in names)
    assert visitors.splitlines() == ["date,visitors,pageviews,bounces,visits,visit_duration",
                                     "2015-05-17,3,4,1,3,1800", "2015-05-18,2,2,1,1,0",
                                     "2015-05-19,2,3,1,2,180"]
    assert "2015-05-17,news.example,,,,,,,1,1,0,0,0" in sources.splitlines()


def test_export_then_import_gives_the_same_days(exported, tmp_path):
    store, out = exported
    fresh = str(tmp_path / "fresh")
    done = run(fresh, "import", str(out), "--site", "s")
    assert done.exit_code == 0 and "imported 3 days" in done.stdout, done.output
    for metric in METRICS:
        assert daily(fresh, metric) == daily(store, metric), metric
    assert daily(fresh, "visitors", "--humans") == daily(store, "visitors", "--humans")
    assert "imported days added" in run(fresh, "report", "--site", "s", "--granularity",
                                        "day", *SPAN, "--metric", "visits").stderr
    assert [n for _, n in daily(fresh, "visits", "--no-imports")] == ["0", "0", "0"]
    hourly = rows(run(fresh, "report", "--site", "s", "--granularity", "hour", *SPAN,
                      "--metric", "visits"))
    assert {r["visits"] for r in hourly} == {"0"}
    listed = run(fresh, "site", "list")
    assert "import" in listed.output, listed.output


def test_the_same_file_again_changes_nothing_and_site_removal_drops_it(exported, tmp_path):
    _, out = exported
    fresh = str(tmp_path / "fresh")
    assert run(fresh, "import", str(out), "--site", "s").exit_code == 0
    again = run(fresh, "import", str(out), "--site", "s")
    assert again.exit_code == 0 and "nothing changed" in again.stdout
    assert [n for _, n in daily(fresh, "pageviews")] == ["4", "2", "3"]
    removed = run(fresh, "site", "remove", "s", "--data", "--yes")
    assert removed.exit_code == 0 and "imported.daily" in removed.output, removed.output
    assert [n for _, n in daily(fresh, "pageviews")] == ["0", "0", "0"]


@pytest.mark.parametrize(("args", "said"), [
    (["--site", "nobody", *SPAN], "unknown site 'nobody'"),
    (["--site", "s", "--start", "2015-05-20", "--end", "2015-05-17"], "--end must come after"),
    (["--site", "s", "--start", "yesterday", "--end", "2015-05-17"], "--start 'yesterday'"),
])
def test_an_export_refused_says_why_and_writes_nothing(exported, tmp_path, args, said):
    store, _ = exported
    out = tmp_path / "x.zip"
    result = run(store, "export", *args, "--out", str(out))
    assert result.exit_code == 2 and said in result.output, result.output
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_imported_visitors_beside_counted_ones_are_marked_approximate(exported, tmp_path):
    store, out = exported
    both = str(tmp_path / "both")
    shutil.copytree(store, both)
    assert run(both, "import", str(out), "--site", "s").exit_code == 0
    result = run(both, "report", "--site", "s", "--granularity", "day", *SPAN,
                 "--metric", "visitors")
    assert [r["visitors"] for r in rows(result)] == ["6", "4", "4"]     # each day twice
    assert "approximate" in result.stderr
    alone = run(store, "report", "--site", "s", "--granularity", "day", *SPAN,
                "--metric", "visitors")
    assert "imported" not in alone.stderr
