"""The oracle: every figure History shows (chart buckets, CSV, KPIs, their change, the
status and referrer panels, the goals) and the CLI prints equals an independent count of
the log (tests/oracle.py), in zones whole, half and a quarter of an hour off UTC and
across a DST change, for ranges of an hour, a day, five days and a month, people and
every hit, with and without a filter, against the previous period and a year before,
with the clock frozen at several instants after the log's last line, and "All time"
as the local days holding hits. Goals are held to it in ``test_oracle_goals``, entry
and exit pages and the pages panel in ``test_oracle_visits``.

Visitors are sketches (HyperLogLog, ~1-2% off): compared within ``oraclekit.VISITORS``."""

from __future__ import annotations

import csv
import datetime as dt
import io
from zoneinfo import ZoneInfo

import oracle
import pytest
import time_machine
from click.testing import CliRunner
from dashkit import dashboard_app, page_module
from oraclekit import (
    INSTANTS,
    PRESETS,
    RANGES,
    SHARED,
    SITE,
    ZONES,
    check_view,
    make_store,
    number_of,
    read_chart,
    read_kpis,
    read_panel,
    search_of,
    visitors_close,
)

from components.statictable import rebuilt
from dashboard.cli import main
from dashboard.pages.history.panels import render_panels
from dashboard.pages.history.view import compute_view

pytestmark = pytest.mark.skipif(not SHARED.exists(), reason=f"{SHARED} is not there")


@pytest.fixture(scope="module")
def combined(tmp_path_factory):
    return make_store(tmp_path_factory, "combined", SHARED.read_text().splitlines(), INSTANTS[0])


@pytest.fixture(scope="module")
def common(tmp_path_factory):
    lines = [oracle.common_line(line) for line in SHARED.read_text().splitlines()]
    return make_store(tmp_path_factory, "common", lines, INSTANTS[0])


@pytest.fixture(scope="module")
def dst(tmp_path_factory):
    return make_store(tmp_path_factory, "dst", oracle.generated_log(),
                  dt.datetime(2026, 3, 10, 12, tzinfo=dt.UTC))


@pytest.mark.parametrize("tz", ZONES)
def test_every_figure_of_the_shared_log_in_every_zone(combined, tz):
    store, hits = combined
    with time_machine.travel(INSTANTS[2], tick=False), dashboard_app(store) as app, \
            app.server.test_request_context():
        for base, granularity in RANGES:
            for humans, status in ((True, None), (False, None), (True, "404")):
                check_view(hits, search_of(f"{base}&gran={granularity}", tz, humans, status),
                           tz, humans, status, granularity)
        check_view(hits, search_of(f"{RANGES[1][0]}&gran=hour", tz, True, None, "yoy"), tz,
                   True, None, vs="yoy")


@pytest.mark.parametrize("instant", INSTANTS, ids=lambda t: f"{t:%dT%H%M}")
@pytest.mark.parametrize("tz", ("Asia/Kolkata", "America/St_Johns", "Europe/Paris"))
def test_presets_and_their_previous_periods_at_several_instants(combined, tz, instant):
    store, hits = combined
    with time_machine.travel(instant, tick=False), dashboard_app(store) as app, \
            app.server.test_request_context():
        for preset in PRESETS:
            check_view(hits, search_of(f"range={preset}", tz, True, None), tz, True, None)


def test_a_common_format_log_counts_people(common):
    """No user agent in the lines: every hit is a person's (GoAccess counts them so)."""
    store, hits = common
    assert not any(h.bot for h in hits)
    with time_machine.travel(INSTANTS[2], tick=False), dashboard_app(store) as app, \
            app.server.test_request_context():
        for tz in ("UTC", "Asia/Kolkata"):
            now = check_view(hits, search_of(f"{RANGES[2][0]}&gran=day", tz, True, None), tz,
                             True, None)
            assert now.total == len(hits) or tz != "UTC"
            assert page_module("history").render(
                search_of(RANGES[2][0], tz, True, None))["alert"] is None
        share = render_panels(search_of(RANGES[2][0], "UTC", True, None))
        assert share["share"].startswith("0% bots")


@pytest.mark.parametrize("tz", ("America/New_York", "Asia/Kathmandu", "UTC"))
def test_a_long_tail_across_midnight_and_a_dst_change(dst, tz):
    store, hits = dst
    ranges = [("range=custom&start=2026-03-08&end=2026-03-09", "hour"),   # 23 h in New York
              ("range=custom&start=2026-03-08T01:00&end=2026-03-08T04:00", "minute"),
              ("range=custom&start=2026-03-07&end=2026-03-10", "hour")]
    with time_machine.travel(dt.datetime(2026, 3, 10, 12, tzinfo=dt.UTC), tick=False), \
            dashboard_app(store) as app, app.server.test_request_context():
        for base, granularity in ranges:
            for humans, status in ((True, None), (False, "404")):
                check_view(hits, search_of(f"{base}&gran={granularity}", tz, humans, status),
                           tz, humans, status, granularity)


@pytest.mark.parametrize("tz", ("Asia/Kolkata", "America/St_Johns"))
def test_the_cli_reproduces_the_charts(combined, tz):
    """``hitboard report --humans --filter`` and ``breakdown`` print History's figures."""
    store, hits = combined
    zone = ZoneInfo(tz)
    start, end = oracle.local("2015-05-18", zone), oracle.local("2015-05-20", zone)
    for args, humans, status in ((["--humans"], True, None), ([], False, None),
                                 (["--humans", "--filter", "status:404"], True, "404")):
        result = CliRunner().invoke(main, [
            "report", "--store", str(store), "--site", SITE, "--granularity", "hour",
            "--start", "2015-05-18", "--end", "2015-05-20", "--tz", tz, *args])
        assert result.exit_code == 0, result.output
        rows = list(csv.DictReader(io.StringIO(result.stdout)))
        counted = oracle.count(hits, start, end, "hour", zone, humans, status)
        assert [int(r["hits"]) for r in rows] == [
            counted.buckets.get(b, 0) for b in oracle.buckets(start, end, "hour", zone)]
    result = CliRunner().invoke(main, [
        "breakdown", "--store", str(store), "--site", SITE, "--by", "status", "--start",
        "2015-05-18", "--end", "2015-05-20", "--tz", tz, "-n", "50"])
    assert result.exit_code == 0, result.output
    counted = oracle.count(hits, start, end, "hour", zone, True)
    assert {r["value"]: int(r["hits"]) for r in csv.DictReader(io.StringIO(result.stdout))} \
        == dict(counted.status)


@pytest.fixture(scope="module")
def kolkata(tmp_path_factory):
    """The shared log as written at +05:30: the same wall-clock stamps, its instants
    5 h 30 earlier (its last hit 15:35 UTC on the 20th, the 20th in Kolkata too)."""
    lines = [oracle.shifted(line, "+0530") for line in SHARED.read_text().splitlines()]
    return make_store(tmp_path_factory, "kolkata", lines, INSTANTS[0])


@pytest.mark.parametrize("log", ("combined", "kolkata"))
@pytest.mark.parametrize("tz", ("UTC", "Asia/Kolkata", "America/St_Johns"))
def test_all_time_is_the_local_days_holding_hits(request, log, tz):
    store, hits = request.getfixturevalue(log)
    zone = ZoneInfo(tz)
    with time_machine.travel(INSTANTS[2], tick=False), dashboard_app(store) as app, \
            app.server.test_request_context():
        search = search_of("range=all&gran=day", tz, True, None)
        view = compute_view(search)
        assert (view.period.start, view.period.end) == oracle.local_days(hits, zone)
        check_view(hits, search, tz, True, None, "day")
        days = read_chart(page_module("history").render(search))
        series = days[days.columns[1]]
        assert series.iloc[0] > 0 and series.iloc[-1] > 0, (log, tz, series.tolist())

@pytest.mark.parametrize("tz", ("UTC", "Asia/Kolkata"))
def test_under_a_referrer_or_a_page_every_panel_counts_its_hits(combined, tz):
    """A referrer and a page are conditions alike. Under each,
    the chart, the KPIs, the status and referrer panels count exactly the hits meeting
    it (the oracle's own), and the panels of visits say they show all of the site's."""
    store, hits = combined
    pages = oracle.pages_of(SHARED.read_text().splitlines())
    zone = ZoneInfo(tz)
    conditions = (("filter=referrer:www.google.com", "referrer = www.google.com",
                   lambda hit, page: hit.referrer == "www.google.com"),
                  ("page=/", "page = /", lambda hit, page: page == "/"))
    with time_machine.travel(INSTANTS[2], tick=False), dashboard_app(store) as app, \
            app.server.test_request_context():
        for base, granularity in RANGES[1:3]:
            for condition, label, keep in conditions:
                search = f"?site={SITE}&tz={tz}&{base}&gran={granularity}&{condition}"
                chosen = [hit for hit, page in zip(hits, pages, strict=True)
                          if keep(hit, page)]
                view = compute_view(search)
                start, end = view.period.start, view.period.end
                now = oracle.count(chosen, start, end, view.period.granularity, zone, True)
                expected = [now.buckets.get(b, 0) for b in oracle.buckets(
                    start, end, view.period.granularity, zone)]
                chart = read_chart(page_module("history").render(search))
                assert chart[chart.columns[1]].tolist() == expected, (search, "chart")
                shown = render_panels(search)
                kpis = read_kpis(shown)
                assert number_of(kpis["hits"][0]) == now.total, (search, "KPI hits")
                assert visitors_close(number_of(kpis["visitors"][0]), now.visitors), search
                status = read_panel(shown, "status")
                assert {v: n for v, (n, _) in status.items()} == dict(now.status), search
                referrers = read_panel(shown, "referrer")
                assert all(n == now.referrers[v] for v, (n, _) in referrers.items()), search
                assert len(referrers) == min(10, len(now.referrers)), search
                said = f"All of the site's visits: {label} does not apply to visits."
                cards = {card.id: str(card) for card in rebuilt(shown["panels"])}
                for panel in ("entry", "exit", "goals"):
                    assert said in cards[f"history-panel-{panel}"], (search, panel)
