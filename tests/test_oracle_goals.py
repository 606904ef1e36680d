"""The oracle on goals: page goals convert on the log's pageviews, event goals on
custom events drawn from its visitors; History's Goals panel and ``breakdown --by goal``
equal the independent count over whole UTC hours and hours of +05:30 and -02:30 zones
(see ``test_oracle``). Visitors are sketches: compared within ``VISITORS``."""

from __future__ import annotations

import csv
import io
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
    VISITORS,
    make_store,
    number_of,
    visitors_close,
)

import queries
from components.statictable import rebuilt
from dashboard.cli import main
from dashboard.pages.history.panels import render_panels
from queries.custom.payload import custom_event
from queries.events import custom as raw
from queries.rollups.build import run_rollups
from queries.stats.goals import goal
from queries.stats.sites import add_goal, register

pytestmark = pytest.mark.skipif(not SHARED.exists(), reason=f"{SHARED} is not there")

# -- goals -----------------------------------------------------------------------------
GOALS = (("page", "/projects/xdotool/**"), ("page", "/blog/**"), ("page", "/"),
         ("page", "/presentations/*/"), ("page", "/**"), ("event", "Download"),
         ("event", "Signup"))
# (zone, start, end, granularity): whole UTC hours (the first; the next two hold a
# POST, a HEAD and an OPTIONS under /projects/xdotool/), hours of zones +05:30 and
# -02:30 (St John's in summer), a range cut at quarters, a local day, the whole log.
GOAL_RANGES = (("UTC", "2015-05-19T06:00", "2015-05-19T07:00", "minute"),
               ("UTC", "2015-05-20T08:00", "2015-05-20T09:00", "minute"),
               ("UTC", "2015-05-20T14:00", "2015-05-20T15:00", "minute"),
               ("Asia/Kolkata", "2015-05-19T12:00", "2015-05-19T13:00", "minute"),
               ("Asia/Kolkata", "2015-05-19T12:15", "2015-05-19T14:45", "hour"),
               ("America/St_Johns", "2015-05-19T12:00", "2015-05-19T13:00", "minute"),
               ("America/St_Johns", "2015-05-18T21:30", "2015-05-19T02:00", "hour"),
               ("Asia/Kolkata", "2015-05-19", "2015-05-20", "hour"),
               ("America/St_Johns", "2015-05-16", "2015-05-22", "day"))


def _goal_store(tmp_path_factory, name: str, lines: list[str]) -> tuple:
    """``lines`` ingested, custom events drawn from them sent as the beacon keeps
    them, ``GOALS`` added, a rollup run: the store and the oracle's pageviews, events
    and hits."""
    store, hits = make_store(tmp_path_factory, name, lines, INSTANTS[0])
    events = oracle.custom_events(lines)
    with time_machine.travel(INSTANTS[0], tick=False):
        db = queries.connect(str(store))
        writer = raw.writer(db)
        for event in events:
            writer.add(raw.document(event.time, SITE, event.page,
                                    custom_event(event.name), *event.visitor))
        writer.flush()
        register(db, SITE, "ingest")
        for kind, value in GOALS:
            assert add_goal(db, SITE, goal(kind, value))
        run_rollups(db, now=INSTANTS[0])
        db.client.close()
    return store, oracle.pageviews(lines), events, hits


@pytest.fixture(scope="module")
def goaled(tmp_path_factory):
    return _goal_store(tmp_path_factory, "goaled", SHARED.read_text().splitlines())


@pytest.fixture(scope="module")
def goaled_common(tmp_path_factory):
    return _goal_store(tmp_path_factory, "goaled_common",
                       [oracle.common_line(line) for line in SHARED.read_text().splitlines()])


def _goal_panel(out) -> dict[str, tuple[int, int, str]]:
    """The Goals panel's rows: goal -> (visitors, conversions, rate shown)."""
    for section in rebuilt(out["panels"]):
        if section.id == "history-panel-goals":
            rows = {}
            for tr in section.children[0].children[1].children:
                cells = tr.children
                if len(cells) < 4:
                    continue      # the panel's "no goals" row
                label = cells[0].children[1]
                while getattr(label, "title", None) is None:
                    label = label.children[0]
                rows[label.title] = (number_of(cells[1].children), number_of(cells[2].children),
                                     cells[3].children)
            return rows
    raise AssertionError("no goals panel")


def check_goals(rows: dict, views, events, hits, tz: str, start: str, end: str):
    """Every goal's conversions equal the oracle's, its visitors and rate within the
    sketches' error, its visitors never more than its conversions nor 0 beside them."""
    zone = ZoneInfo(tz)
    first, last = oracle.local(start, zone), oracle.local(end, zone)
    people = len({h.visitor for h in hits if first <= h.time < last and not h.bot})
    for kind, value in GOALS:
        label = f"Visit {value}" if kind == "page" else value
        seen, n, rate = rows[label]
        conversions, visitors = oracle.goal(kind, value, views, events, first, last)
        where = (tz, start, end, label, (seen, n, rate), (visitors, conversions, people))
        assert n == conversions, where
        assert visitors_close(seen, visitors) and seen <= n and bool(seen) == bool(n), where
        expected = 100 * visitors / people if people else None
        shown = None if rate in ("–", "", None) else float(str(rate).rstrip(" %"))
        assert (shown is None) == (expected is None), where
        assert expected is None or abs(shown - expected) <= 0.05 + VISITORS * expected, where


@pytest.mark.parametrize("log", ("goaled", "goaled_common"))
def test_goals_in_history_equal_an_independent_count(log, request):
    """Page goals convert on pageviews alone (not a POST, a HEAD, an OPTIONS, an asset or
    a 404 under them); event goals on people's events; over whole UTC hours, hours and
    cut ranges of zones +05:30 and -02:30, a local day and the whole log."""
    store, views, events, hits = request.getfixturevalue(log)
    with time_machine.travel(INSTANTS[2], tick=False), dashboard_app(store) as app, \
            app.server.test_request_context():
        for tz, start, end, granularity in GOAL_RANGES:
            search = (f"?site={SITE}&tz={tz}&range=custom&start={start}&end={end}"
                      f"&gran={granularity}")
            check_goals(_goal_panel(render_panels(search)), views, events, hits, tz,
                        start, end)


def test_goals_in_the_cli_equal_an_independent_count(goaled):
    store, views, events, hits = goaled
    for tz, start, end, _ in GOAL_RANGES:
        result = CliRunner().invoke(main, [
            "breakdown", "--store", str(store), "--site", SITE, "--by", "goal", "--start",
            start, "--end", end, "--tz", tz])
        assert result.exit_code == 0, result.output
        rows = {r["value"]: (int(r["visitors"]), int(r["conversions"]), r["conversion_rate"])
                for r in csv.DictReader(io.StringIO(result.stdout)) if r["value"]}
        check_goals(rows, views, events, hits, tz, start, end)


