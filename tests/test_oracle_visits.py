"""The oracle on visits and pages: entry and exit pages keep the log's order within a
second, and the pages panel loses no hit across the hours a scanner filled with paths,
in zones whole, half and a quarter of an hour off UTC (see ``test_oracle``)."""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections import Counter
from zoneinfo import ZoneInfo

import oracle
import pytest
import time_machine
from click.testing import CliRunner
from dashkit import dashboard_app
from oraclekit import (
    INSTANTS,
    SHARED,
    SITE,
    make_store,
    number_of,
    read_panel,
    search_of,
)

import queries
from components.statictable import rebuilt
from dashboard.cli import main
from dashboard.pages.history.panels import render_panels
from queries.ingest.run import Ingestor, ingest_file
from queries.rollups.build import run_rollups

pytestmark = pytest.mark.skipif(not SHARED.exists(), reason=f"{SHARED} is not there")

BROWSER = ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like "
           "Gecko) Chrome/126.0 Safari/537.36")
SCANNED_DAY = dt.datetime(2015, 5, 19, tzinfo=dt.UTC)


def _visit_panel(out, kind: str) -> dict[str, int]:
    """An entry or exit pages panel's rows: value -> visits."""
    for section in rebuilt(out["panels"]):
        if section.id == f"history-panel-{kind}":
            return {tr.children[0].children[1].title: number_of(tr.children[1].children)
                    for tr in section.children[0].children[1].children
                    if len(tr.children) >= 3}
    raise AssertionError(f"no {kind} panel")


def _entries_and_exits(visits: list[dict]) -> dict[str, Counter]:
    return {kind: Counter(v[kind] for v in visits) for kind in ("entry", "exit")}


@pytest.fixture(scope="module")
def common_visits(tmp_path_factory):
    """The common-format log ingested and rolled up, its visits cut, as ``hitboard
    ingest`` leaves it."""
    lines = [oracle.common_line(line) for line in SHARED.read_text().splitlines()]
    store, _ = make_store(tmp_path_factory, "common-visits", lines, INSTANTS[0])
    with time_machine.travel(INSTANTS[0], tick=False):
        db = queries.connect(str(store))
        run_rollups(db, now=INSTANTS[0])
        db.client.close()
    return store, lines


def test_entry_and_exit_pages_keep_the_log_s_order_within_a_second(common_visits):
    """A page and the pages it asks for in the same second (a directory listing, its
    icons): the visit enters and leaves where the log's order says, as History and the
    CLI show them, in every zone."""
    store, lines = common_visits
    views = oracle.pageviews(lines)
    expected = _entries_and_exits(oracle.visits(views))
    by_name = _entries_and_exits(oracle.visits(sorted(views, key=lambda v: (v.time, v.page))))
    assert expected != by_name                  # the log has such seconds: they matter
    for kind in ("entry", "exit"):
        result = CliRunner().invoke(main, [
            "breakdown", "--store", str(store), "--site", SITE, "--by", f"{kind}_page",
            "--start", "2015-05-16", "--end", "2015-05-22", "-n", "10000"])
        assert result.exit_code == 0, result.output
        shown = {r["value"]: int(r["visits"]) for r in csv.DictReader(io.StringIO(
            result.stdout))}
        assert shown == dict(expected[kind]), kind
    with time_machine.travel(INSTANTS[2], tick=False), dashboard_app(store) as app, \
            app.server.test_request_context():
        for tz in ("UTC", "Asia/Kolkata", "America/St_Johns"):
            zone = ZoneInfo(tz)
            start, end = oracle.local("2015-05-18", zone), oracle.local("2015-05-20", zone)
            found = _entries_and_exits([v for v in oracle.visits(views)
                                        if start <= v["start"] < end])
            out = render_panels(search_of("range=custom&start=2015-05-18&end=2015-05-20",
                                        tz, True, None))
            for kind in ("entry", "exit"):
                shown = _visit_panel(out, kind)
                assert len(shown) == 10, (tz, kind)
                for page, visits in shown.items():
                    assert visits == found[kind][page], (tz, kind, page)




@pytest.fixture(scope="module")
def scanned(tmp_path_factory):
    """The shared log after a scanner's first visit of the 19th (400 paths, a file of
    its own: the day's page cap full before the day's pages come), with a second visit
    in its 13:00 hour (400 more paths, and a page of the list among them: the hour's
    cap full)."""
    folder = tmp_path_factory.mktemp("scanned")
    first = oracle.scanner(SCANNED_DAY + dt.timedelta(hours=1),
                           [f"/admin/{i:04d}.php" for i in range(400)], 3, BROWSER)
    second = oracle.scanner(SCANNED_DAY + dt.timedelta(hours=13, minutes=20),
                            [f"/admin/b{i:04d}.php" for i in range(400)] +
                            ["/projects/xdotool/"], 3, BROWSER)
    logs = {"scan.log": first, "access.log": [*SHARED.read_text().splitlines(), *second]}
    with time_machine.travel(INSTANTS[0], tick=False):
        db = queries.connect(str(folder / "store"))
        queries.ensure_indexes(db)
        ingestor = Ingestor(db, site=SITE)
        for name, its in logs.items():
            (folder / name).write_text("\n".join(its) + "\n")
            ingest_file(ingestor, folder / name, SITE, from_start=True)
        ingestor.close()
        db.client.close()
    return folder / "store", [*first, *logs["access.log"]]


@pytest.mark.parametrize(("tz", "start", "end"), [
    ("UTC", "2015-05-16", "2015-05-22"),                  # the 19th's day document
    ("Asia/Kolkata", "2015-05-19", "2015-05-20"),         # its 13:00 hour's document
    ("America/St_Johns", "2015-05-18", "2015-05-21")])
def test_the_pages_panel_across_a_scanner_s_hours_loses_no_hit(scanned, tz, start, end):
    store, lines = scanned
    zone = ZoneInfo(tz)
    exact = oracle.page_hits(lines, oracle.local(start, zone), oracle.local(end, zone))
    with time_machine.travel(INSTANTS[2], tick=False), dashboard_app(store) as app, \
            app.server.test_request_context():
        shown = read_panel(render_panels(search_of(f"range=custom&start={start}&end={end}", tz,
                                             True, None)), "page")
    assert len(shown) == 10
    for page, (hits, _) in shown.items():
        assert hits == exact[page], (tz, page, hits, exact[page])

