"""The oracle tests' shared pieces: the shared log's stores as ``hitboard ingest`` leaves
them, and History's figures read back from its render (chart CSV, KPI cards, panels) and
held to the independent count of ``tests/oracle.py``."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path
from zoneinfo import ZoneInfo

import oracle
import pandas as pd
import time_machine
from dashkit import page_module

import queries
from components.statictable import rebuilt
from dashboard.pages.history.panels import render_panels
from dashboard.pages.history.view import compute_view
from queries.ingest.run import Ingestor, ingest_file

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "apache_combined_2015.log"
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


def make_store(tmp_path_factory, name: str, lines: list[str], now: dt.datetime) -> tuple:
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




def read_chart(out) -> pd.DataFrame:
    """The plotted CSV (what the chart draws, and its compared period)."""
    return pd.read_csv(io.StringIO(out["plotted"]["content"]))


def read_kpis(out) -> dict[str, tuple[str, str]]:
    """KPI id -> (value shown, change shown)."""
    return {card.children[1].id.removeprefix("history-kpi-"):
            (card.children[1].children, card.children[2].children[0].children)
            for card in rebuilt(out["kpis"])}


def read_panel(out, dim: str) -> dict[str, tuple[int, int | None]]:
    """A panel's rows: value -> (hits, visitors)."""
    return {value: (hits, None if text_of(seen) == "–" else number_of(seen))
            for value, (hits, seen) in read_shown(out, dim).items()}


def read_shown(out, dim: str) -> dict:
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


def error_of(shown) -> int:
    """An estimate's error, from its title ("±27 (95 % interval)"); 0: exact."""
    if isinstance(shown, str):
        return 0
    return number_of(shown.title.split("±")[1].split(" ")[0])


def check_estimates(shown, now, search: str) -> None:
    """Visitors: a figure without "≈" is the exact count, one with it is
    within its error; a value holding every hit shows the KPI's figure; the devices'
    visitors (each visitor has one device) add up to the KPI's."""
    visitors = read_kpis(shown)["visitors"][0]
    if not now.total or text_of(visitors) == "–":
        return
    error = error_of(visitors)
    assert abs(number_of(visitors) - now.visitors) <= error, (search, visitors, now.visitors)
    for dim in ("referrer", "status", "device", "browser", "os", "utm_source"):
        for value, (hits, seen) in read_shown(shown, dim).items():
            if hits == now.total:
                assert (text_of(seen), error_of(seen)) == (text_of(visitors), error), (
                    search, dim, value, "a value holding every hit")
    devices = read_shown(shown, "device")
    if len(devices) < 10:
        assert sum(number_of(seen) for _, seen in devices.values()) == number_of(visitors), (
            search, "the devices' visitors, the KPI's")


def text_of(shown) -> str:
    """A figure's text: an estimate is a Span ("≈1,653", its error in its title)."""
    return shown if isinstance(shown, str) else shown.children


def number_of(text) -> int:
    return int(text_of(text).removeprefix("≈").replace(",", ""))


def change_text(now: int, before: int) -> str:
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
    chart = read_chart(out)
    series = chart.columns[1]
    expected = [now.buckets.get(b, 0) for b in oracle.buckets(start, end, drawn, zone)]
    assert chart[series].tolist() == expected, (search, "chart")
    previous_buckets = oracle.buckets(*before_span, drawn, zone)
    assert chart[f"previous {series}"].dropna().astype(int).tolist()[:len(previous_buckets)] \
        == [before.buckets.get(b, 0) for b in previous_buckets], (search, "previous chart")

    shown = render_panels(search)
    kpis = read_kpis(shown)
    assert number_of(kpis["hits"][0]) == now.total == sum(expected), (search, "KPI hits")
    assert kpis["hits"][1] == change_text(now.total, before.total), (search, "KPI change")
    visitors = kpis["visitors"][0]
    if now.total:
        assert visitors_close(number_of(visitors), now.visitors), (search, visitors,
                                                                  now.visitors)
    status_panel = read_panel(shown, "status")
    for value, (n, people) in status_panel.items():
        assert n == now.status[value], (search, "status", value)
        assert people is None or people <= n
    assert sum(n for n, _ in status_panel.values()) == now.total or len(status_panel) == 10
    for value, (n, people) in read_panel(shown, "referrer").items():
        assert n == now.referrers[value], (search, "referrer", value)
        if people is not None and visitors != "–":
            assert people <= number_of(visitors), (search, "a value's visitors, the view's")
        if people is not None:
            assert people <= n and visitors_close(people, now.referrer_visitors[value]), (
                search, "referrer visitors", value, people, now.referrer_visitors[value])
    if status is None:      # a filter's KPI and its panels read different stores
        check_estimates(shown, now, search)
    return now


def search_of(base: str, tz: str, humans: bool, status: str | None, vs: str = "previous"):
    query = f"?site={SITE}&tz={tz}&{base}&compare=1"
    if not humans:
        query += "&bots=1"
    if status:
        query += f"&filter=status:{status}"
    if vs != "previous":
        query += f"&vs={vs}"
    return query

