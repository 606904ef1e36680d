"""The oracle: every figure History shows (chart buckets, CSV, KPIs, their change, the
status and referrer panels, the goals) and the CLI prints equals an independent count of
the log (tests/oracle.py), in zones whole, half and a quarter of an hour off UTC and
across a DST change, for ranges of an hour, a day, five days and a month, people and
every hit, with and without a filter, against the previous period and a year before,
with the clock frozen at several instants after the log's last line. Goals: page goals
on the log's pageviews, event goals on custom events drawn from its visitors.

Visitors are sketches (HyperLogLog, ~1-2% off): compared within ``VISITORS``."""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections import Counter
from pathlib import Path
from zoneinfo import ZoneInfo

import oracle
import pandas as pd
import pytest
import time_machine
from click.testing import CliRunner
from dashkit import dashboard_app, page_module

import queries
from components.statictable import rebuilt
from dashboard.cli import main
from dashboard.pages.history.panels import render_panels
from dashboard.pages.history.view import compute_view
from queries.custom.payload import custom_event
from queries.events import custom as raw
from queries.ingest.run import Ingestor, ingest_file
from queries.rollups.build import run_rollups
from queries.stats.goals import goal
from queries.stats.sites import add_goal, register

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "apache_combined_2015.log"
pytestmark = pytest.mark.skipif(not SHARED.exists(), reason=f"{SHARED} is not there")
ZONES = ("UTC", "Europe/Paris", "America/New_York", "Asia/Kolkata", "Asia/Kathmandu",
         "America/St_Johns")
SITE = "logs"
# Instants after the shared log's last line (2015-05-20 21:05:59 UTC): "today", "7
# days" and their previous periods then fall differently in each zone.
INSTANTS = (dt.datetime(2015, 5, 20, 21, 30, tzinfo=dt.UTC),
            dt.datetime(2015, 5, 21, 6, 10, tzinfo=dt.UTC),
            dt.datetime(2015, 5, 21, 23, 50, tzinfo=dt.UTC))
# (URL range, granularity): an hour by minute, a day by hour, five days by day, a month.
RANGES = (("range=custom&start=2015-05-19T13:00&end=2015-05-19T14:00", "minute"),
          ("range=custom&start=2015-05-19&end=2015-05-20", "hour"),
          ("range=custom&start=2015-05-16&end=2015-05-21", "day"),
          ("range=custom&start=2015-05-01&end=2015-06-01", "day"))
PRESETS = ("today", "yesterday", "7d")
VISITORS = 0.03


def visitors_close(shown: int, exact: int) -> bool:
    return abs(shown - exact) <= max(1, VISITORS * exact)


def _store(tmp_path_factory, name: str, lines: list[str], now: dt.datetime) -> tuple:
    """A store holding ``lines`` ingested as ``hitboard ingest`` would, at ``now``."""
    folder = tmp_path_factory.mktemp(name)
    log = folder / "access.log"
    log.write_text("\n".join(lines) + "\n")
    with time_machine.travel(now, tick=False):
        db = queries.connect(str(folder / "store"))
        queries.ensure_indexes(db)
        ingest_file(Ingestor(db, site=SITE), log, SITE, from_start=True)
        db.client.close()
    return folder / "store", oracle.parse(lines, SITE)


@pytest.fixture(scope="module")
def combined(tmp_path_factory):
    return _store(tmp_path_factory, "combined", SHARED.read_text().splitlines(), INSTANTS[0])


@pytest.fixture(scope="module")
def common(tmp_path_factory):
    lines = [oracle.common_line(line) for line in SHARED.read_text().splitlines()]
    return _store(tmp_path_factory, "common", lines, INSTANTS[0])


@pytest.fixture(scope="module")
def dst(tmp_path_factory):
    return _store(tmp_path_factory, "dst", oracle.generated_log(),
                  dt.datetime(2026, 3, 10, 12, tzinfo=dt.UTC))


def _chart(out) -> pd.DataFrame:
    """The plotted CSV (what the chart draws, and its compared period)."""
    return pd.read_csv(io.StringIO(out["plotted"]["content"]))


def _kpis(out) -> dict[str, tuple[str, str]]:
    """KPI id -> (value shown, change shown)."""
    return {card.children[1].id.removeprefix("history-kpi-"):
            (card.children[1].children, card.children[2].children[0].children)
            for card in rebuilt(out["kpis"])}


def _panel(out, dim: str) -> dict[str, tuple[int, int | None]]:
    """A panel's rows: value -> (hits, visitors)."""
    return {value: (hits, None if _text(seen) == "–" else _number(seen))
            for value, (hits, seen) in _shown(out, dim).items()}


def _shown(out, dim: str) -> dict:
    """A panel's rows: value -> (hits, visitors as shown: text, or an estimate's Span)."""
    for section in rebuilt(out["panels"]):
        if section.id == f"history-panel-{dim}":
            rows = {}
            for tr in section.children[0].children[1].children:
                cells = tr.children
                if len(cells) < 3:
                    continue      # the panel's "no hits" row
                label = cells[0].children[1]
                rows[label.title] = (int(cells[1].children.replace(",", "")),
                                     cells[2].children)
            return rows
    raise AssertionError(f"no {dim} panel")


def _error(shown) -> int:
    """An estimate's error, from its title ("±27 (95 % interval)"); 0: exact."""
    if isinstance(shown, str):
        return 0
    return _number(shown.title.split("±")[1].split(" ")[0])


def check_estimates(shown, now, search: str) -> None:
    """Visitors: a figure without "≈" is the exact count, one with it is
    within its error; a value holding every hit shows the KPI's figure; the devices'
    visitors (each visitor has one device) add up to the KPI's."""
    visitors = _kpis(shown)["visitors"][0]
    if not now.total or _text(visitors) == "–":
        return
    error = _error(visitors)
    assert abs(_number(visitors) - now.visitors) <= error, (search, visitors, now.visitors)
    for dim in ("referrer", "status", "device", "browser", "os", "utm_source"):
        for value, (hits, seen) in _shown(shown, dim).items():
            if hits == now.total:
                assert (_text(seen), _error(seen)) == (_text(visitors), error), (
                    search, dim, value, "a value holding every hit")
    devices = _shown(shown, "device")
    if len(devices) < 10:
        assert sum(_number(seen) for _, seen in devices.values()) == _number(visitors), (
            search, "the devices' visitors, the KPI's")


def _text(shown) -> str:
    """A figure's text: an estimate is a Span ("≈1,653", its error in its title)."""
    return shown if isinstance(shown, str) else shown.children


def _number(text) -> int:
    return int(_text(text).removeprefix("≈").replace(",", ""))


def _change(now: int, before: int) -> str:
    if not before:
        return "new" if now else "–"
    return f"{100 * (now - before) / before:+.1f} %".replace("-", "−")


def check_view(hits, search: str, tz: str, humans: bool, status: str | None,
               granularity: str | None = None, vs: str = "previous"):
    """Render History for ``search`` and hold every figure to the oracle's count."""
    history = page_module("history")

    zone = ZoneInfo(tz)
    view = compute_view(search)
    start, end = view.period.start, view.period.end
    drawn = view.period.granularity if status is None else (
        "hour" if view.period.granularity == "minute" else view.period.granularity)
    assert granularity is None or view.period.granularity in (granularity, "hour")
    now = oracle.count(hits, start, end, drawn, zone, humans, status)
    before_span = oracle.previous(start, end, zone, vs)
    before = oracle.count(hits, *before_span, drawn, zone, humans, status)

    out = history.render(search)
    assert out["alert"] is None or "No hits in this range" in str(out["alert"])
    chart = _chart(out)
    series = chart.columns[1]
    expected = [now.buckets.get(b, 0) for b in oracle.buckets(start, end, drawn, zone)]
    assert chart[series].tolist() == expected, (search, "chart")
    previous_buckets = oracle.buckets(*before_span, drawn, zone)
    assert chart[f"previous {series}"].dropna().astype(int).tolist()[:len(previous_buckets)] \
        == [before.buckets.get(b, 0) for b in previous_buckets], (search, "previous chart")

    shown = render_panels(search)
    kpis = _kpis(shown)
    assert _number(kpis["hits"][0]) == now.total == sum(expected), (search, "KPI hits")
    assert kpis["hits"][1] == _change(now.total, before.total), (search, "KPI change")
    visitors = kpis["visitors"][0]
    if now.total:
        assert visitors_close(_number(visitors), now.visitors), (search, visitors,
                                                                  now.visitors)
    status_panel = _panel(shown, "status")
    for value, (n, people) in status_panel.items():
        assert n == now.status[value], (search, "status", value)
        assert people is None or people <= n
    assert sum(n for n, _ in status_panel.values()) == now.total or len(status_panel) == 10
    for value, (n, people) in _panel(shown, "referrer").items():
        assert n == now.referrers[value], (search, "referrer", value)
        if people is not None and visitors != "–":
            assert people <= _number(visitors), (search, "a value's visitors, the view's")
        if people is not None:
            assert people <= n and visitors_close(people, now.referrer_visitors[value]), (
                search, "referrer visitors", value, people, now.referrer_visitors[value])
    if status is None:      # a filter's KPI and its panels read different stores
        check_estimates(shown, now, search)
    return now


def _search(base: str, tz: str, humans: bool, status: str | None, vs: str = "previous"):
    query = f"?site={SITE}&tz={tz}&{base}&compare=1"
    if not humans:
        query += "&bots=1"
    if status:
        query += f"&filter=status:{status}"
    if vs != "previous":
        query += f"&vs={vs}"
    return query


@pytest.mark.parametrize("tz", ZONES)
def test_every_figure_of_the_shared_log_in_every_zone(combined, tz):
    store, hits = combined
    with time_machine.travel(INSTANTS[2], tick=False), dashboard_app(store) as app, \
            app.server.test_request_context():
        for base, granularity in RANGES:
            for humans, status in ((True, None), (False, None), (True, "404")):
                check_view(hits, _search(f"{base}&gran={granularity}", tz, humans, status),
                           tz, humans, status, granularity)
        check_view(hits, _search(f"{RANGES[1][0]}&gran=hour", tz, True, None, "yoy"), tz,
                   True, None, vs="yoy")


@pytest.mark.parametrize("instant", INSTANTS, ids=lambda t: f"{t:%dT%H%M}")
@pytest.mark.parametrize("tz", ("Asia/Kolkata", "America/St_Johns", "Europe/Paris"))
def test_presets_and_their_previous_periods_at_several_instants(combined, tz, instant):
    store, hits = combined
    with time_machine.travel(instant, tick=False), dashboard_app(store) as app, \
            app.server.test_request_context():
        for preset in PRESETS:
            check_view(hits, _search(f"range={preset}", tz, True, None), tz, True, None)


def test_a_common_format_log_counts_people(common):
    """No user agent in the lines: every hit is a person's (GoAccess counts them so)."""
    store, hits = common
    assert not any(h.bot for h in hits)
    with time_machine.travel(INSTANTS[2], tick=False), dashboard_app(store) as app, \
            app.server.test_request_context():
        for tz in ("UTC", "Asia/Kolkata"):
            now = check_view(hits, _search(f"{RANGES[2][0]}&gran=day", tz, True, None), tz,
                             True, None)
            assert now.total == len(hits) or tz != "UTC"
            assert page_module("history").render(
                _search(RANGES[2][0], tz, True, None))["alert"] is None
        share = render_panels(_search(RANGES[2][0], "UTC", True, None))
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
                check_view(hits, _search(f"{base}&gran={granularity}", tz, humans, status),
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


# -- entry and exit pages, "All time", the pages panel across a scanner's hours ---------
BROWSER = ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like "
           "Gecko) Chrome/126.0 Safari/537.36")
SCANNED_DAY = dt.datetime(2015, 5, 19, tzinfo=dt.UTC)


def _visit_panel(out, kind: str) -> dict[str, int]:
    """An entry or exit pages panel's rows: value -> visits."""
    for section in rebuilt(out["panels"]):
        if section.id == f"history-panel-{kind}":
            return {tr.children[0].children[1].title: _number(tr.children[1].children)
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
    store, _ = _store(tmp_path_factory, "common-visits", lines, INSTANTS[0])
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
            out = render_panels(_search("range=custom&start=2015-05-18&end=2015-05-20",
                                        tz, True, None))
            for kind in ("entry", "exit"):
                shown = _visit_panel(out, kind)
                assert len(shown) == 10, (tz, kind)
                for page, visits in shown.items():
                    assert visits == found[kind][page], (tz, kind, page)


@pytest.fixture(scope="module")
def kolkata(tmp_path_factory):
    """The shared log as written at +05:30: the same wall-clock stamps, its instants
    5 h 30 earlier (its last hit 15:35 UTC on the 20th, the 20th in Kolkata too)."""
    lines = [oracle.shifted(line, "+0530") for line in SHARED.read_text().splitlines()]
    return _store(tmp_path_factory, "kolkata", lines, INSTANTS[0])


@pytest.mark.parametrize("log", ("combined", "kolkata"))
@pytest.mark.parametrize("tz", ("UTC", "Asia/Kolkata", "America/St_Johns"))
def test_all_time_is_the_local_days_holding_hits(request, log, tz):
    store, hits = request.getfixturevalue(log)
    zone = ZoneInfo(tz)
    with time_machine.travel(INSTANTS[2], tick=False), dashboard_app(store) as app, \
            app.server.test_request_context():
        search = _search("range=all&gran=day", tz, True, None)
        view = compute_view(search)
        assert (view.period.start, view.period.end) == oracle.local_days(hits, zone)
        check_view(hits, search, tz, True, None, "day")
        days = _chart(page_module("history").render(search))
        series = days[days.columns[1]]
        assert series.iloc[0] > 0 and series.iloc[-1] > 0, (log, tz, series.tolist())


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
        shown = _panel(render_panels(_search(f"range=custom&start={start}&end={end}", tz,
                                             True, None)), "page")
    assert len(shown) == 10
    for page, (hits, _) in shown.items():
        assert hits == exact[page], (tz, page, hits, exact[page])


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
    store, hits = _store(tmp_path_factory, name, lines, INSTANTS[0])
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
                rows[label.title] = (_number(cells[1].children), _number(cells[2].children),
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
                chart = _chart(page_module("history").render(search))
                assert chart[chart.columns[1]].tolist() == expected, (search, "chart")
                shown = render_panels(search)
                kpis = _kpis(shown)
                assert _number(kpis["hits"][0]) == now.total, (search, "KPI hits")
                assert visitors_close(_number(kpis["visitors"][0]), now.visitors), search
                status = _panel(shown, "status")
                assert {v: n for v, (n, _) in status.items()} == dict(now.status), search
                referrers = _panel(shown, "referrer")
                assert all(n == now.referrers[v] for v, (n, _) in referrers.items()), search
                assert len(referrers) == min(10, len(now.referrers)), search
                said = f"All of the site's visits: {label} does not apply to visits."
                cards = {card.id: str(card) for card in rebuilt(shown["panels"])}
                for panel in ("entry", "exit", "goals"):
                    assert said in cards[f"history-panel-{panel}"], (search, panel)
