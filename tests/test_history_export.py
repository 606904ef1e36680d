"""History's Export button (``dashboard/pages/history/export.py``): the shown range's
days of the site's zone, as the ZIP ``hitboard export`` writes."""

from __future__ import annotations

import base64
import datetime as dt
import io
import zipfile
from pathlib import Path

import pytest
from dashkit import page_module, seed

from dashboard.pages.history import export
from dashboard.services import get_services
from queries.stats.sites import register

PLAUSIBLE = Path(__file__).parent / "data" / "plausible"
pytestmark = pytest.mark.usefixtures("frozen_clock")


def test_the_button_exports_the_shown_days(app):
    db = get_services(app.server).db
    register(db, "s", "admin", tz="Europe/Paris")
    now = dt.datetime.now(dt.UTC)
    seed(db, "s", [(now - dt.timedelta(days=d), "/a", 3) for d in range(1, 4)])
    data, alert = export.export_zip(1, "?site=s&range=7d&tz=UTC")
    assert alert is None and data["filename"].startswith("hitboard-s-")
    with zipfile.ZipFile(io.BytesIO(base64.b64decode(data["content"]))) as zipped:
        names = zipped.namelist()
        visitors = zipped.read(names[0]).decode().splitlines()
    assert len(names) == 10 and names[0].startswith("imported_visitors_")
    assert visitors[0] == "date,visitors,pageviews,bounces,visits,visit_duration"
    # 7d: from midnight UTC six days back to now, days 12 to 18 of Paris's too
    assert [row[:10] for row in visitors[1:]] == [f"2026-03-{d}" for d in range(12, 19)]


def test_a_range_past_a_quarter_is_left_to_the_cli(app):
    register(get_services(app.server).db, "s", "admin")
    seed(get_services(app.server).db, "s", [(dt.datetime.now(dt.UTC), "/a", 1)])
    data, alert = export.export_zip(
        1, "?site=s&range=custom&start=2020-01-01&end=2022-01-01&tz=UTC")
    assert "92 days at most" in str(alert)


def test_the_days_a_range_touches():
    utc = dt.UTC
    start, end = dt.datetime(2026, 3, 1, tzinfo=utc), dt.datetime(2026, 3, 3, tzinfo=utc)
    assert export.export_days(start, end, "UTC") == (dt.date(2026, 3, 1), dt.date(2026, 3, 3))
    assert export.export_days(start, end, "Europe/Paris") == (dt.date(2026, 3, 1),
                                                              dt.date(2026, 3, 4))


def test_history_per_day_adds_imported_days_and_says_so_never_per_hour(app):
    from historykit import kpi, panel_rows

    from dashboard.pages.history.panels import render_panels
    from queries.imports import archive as import_archive
    from queries.imports import store as imported

    files = {p.name: p.read_text() for p in sorted(PLAUSIBLE.glob("*.csv"))}
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w") as out:
        for name, text in files.items():
            out.writestr(name, text)
    db = get_services(app.server).db
    register(db, "s", "import")
    imported.save(db, "s", import_archive.read(zipped))
    seed(db, "s", [(dt.datetime.now(dt.UTC), "/a", 1)])   # History lists counted sites
    days = "?site=s&tz=UTC&range=custom&start=2024-03-01&end=2024-03-03&metric=visits"
    chart = page_module("history").render(days + "&gran=day")["figure"]
    assert [list(t.y) for t in chart.data if t.name == "Visits"] == [[140, 110]]
    out = render_panels(days + "&gran=day")
    assert kpi(out, "visits")[0] == "250"
    assert kpi(out, "visitors")[0] == "215"          # 120 + 95, summed: approximate
    assert "include 2 imported days" in str(out) and "approximate" in str(out)
    assert panel_rows(out, "referrer") == {"Newsletter": 180, "Google": 140, "(direct)": 120,
                                           "DuckDuckGo": 60, "Hacker News": 50}
    assert panel_rows(out, "page")["/"] == 330 and "The panels add 2 imported" in str(out)
    hourly = render_panels(days + "&gran=hour")
    assert kpi(hourly, "visits")[0] == "0" and "imported" not in str(hourly)
    assert kpi(hourly, "visitors")[0] == "–"          # no counters, nothing imported
    assert panel_rows(hourly, "referrer") == {}
