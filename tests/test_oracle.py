"""The oracle: every figure History shows (chart buckets, CSV, KPIs, their change, the
status and referrer panels) and the CLI prints equals an independent count of the log
(tests/oracle.py), in zones whole, half and a quarter of an hour off UTC and across a DST
change, for ranges of an hour, a day, five days and a month, people and every hit, with
and without a filter, against the previous period and a year before, with the clock
frozen at several instants after the log's last line.

Visitors are sketches (HyperLogLog, ~1-2% off): compared within ``VISITORS``."""

from __future__ import annotations

import csv
import datetime as dt
import io
from pathlib import Path
from zoneinfo import ZoneInfo

import oracle
import pandas as pd
import pytest
import time_machine
from click.testing import CliRunner
from dashkit import dashboard_app, page_module

import queries
from dashboard.cli import main
from dashboard.pages.history.panels import render_panels
from dashboard.pages.history.view import compute_view
from queries.ingest.run import Ingestor, ingest_file

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
            for card in out["kpis"]}


def _panel(out, dim: str) -> dict[str, tuple[int, int | None]]:
    """A panel's rows: value -> (hits, visitors)."""
    return {value: (hits, None if _text(seen) == "–" else _number(seen))
            for value, (hits, seen) in _shown(out, dim).items()}


def _shown(out, dim: str) -> dict:
    """A panel's rows: value -> (hits, visitors as shown: text, or an estimate's Span)."""
    for section in out["panels"]:
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
    """Visitors (issue 45, row 6): a figure without "≈" is the exact count, one with it is
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
