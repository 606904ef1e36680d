"""dashboard/pages/present.py: the presenter's playlist views as plain functions."""

import datetime as dt

from dashkit import page_module
from dimkit import ingest_sample

from dashboard.services import get_services


def test_top_pages_today_are_ranked_as_live_ranks_them(app, tmp_path):
    """People's page views: Googlebot's hits on / and the stylesheet are left out."""
    present = page_module("present")
    now = dt.datetime.now(dt.UTC)
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    start = max(midnight, now - dt.timedelta(minutes=2)).replace(microsecond=0)
    ingest_sample(get_services(app.server).db, "s", tmp_path, start=start,
                  step=dt.timedelta(seconds=1))
    _, bars = present.refresh_views(0, "dark", "?site=s&tz=UTC")
    bar = bars["data"][0]
    assert dict(zip(bar["y"], bar["x"], strict=True)) == {"/": 40, "/about": 20, "/missing": 5}
