"""History's Export button (``dashboard/pages/history/export.py``): the shown range's
days of the site's zone, as the ZIP ``hitboard export`` writes."""

from __future__ import annotations

import base64
import datetime as dt
import io
import zipfile

import pytest
from dashkit import seed

from dashboard.pages.history import export
from dashboard.services import get_services
from queries.stats.sites import register

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


def test_a_range_past_a_year_is_left_to_the_cli(app):
    register(get_services(app.server).db, "s", "admin")
    seed(get_services(app.server).db, "s", [(dt.datetime.now(dt.UTC), "/a", 1)])
    data, alert = export.export_zip(
        1, "?site=s&range=custom&start=2020-01-01&end=2022-01-01&tz=UTC")
    assert "366 days at most" in str(alert)


def test_the_days_a_range_touches():
    utc = dt.UTC
    start, end = dt.datetime(2026, 3, 1, tzinfo=utc), dt.datetime(2026, 3, 3, tzinfo=utc)
    assert export.export_days(start, end, "UTC") == (dt.date(2026, 3, 1), dt.date(2026, 3, 3))
    assert export.export_days(start, end, "Europe/Paris") == (dt.date(2026, 3, 1),
                                                              dt.date(2026, 3, 4))
