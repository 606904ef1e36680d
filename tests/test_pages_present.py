"""dashboard/pages/present.py: the presenter's playlist views as plain functions."""

import datetime as dt

from dashkit import page_module
from dimkit import ingest_sample

import queries
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


def test_top_pages_of_the_last_5_minutes_leave_out_the_rest_of_their_hour(app, monkeypatch):
    """The ticker's top list says "last 5 min": hits of 10:05 are not in it at 10:30."""
    from dashboard import reads

    present = page_module("present")
    now = dt.datetime(2026, 11, 20, 10, 30, 20, tzinfo=dt.UTC)
    monkeypatch.setattr(reads, "now", lambda seconds: now)
    db = get_services(app.server).db
    with queries.HitRecorder(db) as recorder:
        recorder.record("s", "/old", now.replace(minute=5), n=5)
        recorder.record("s", "/new", now.replace(minute=27), n=3)
        recorder.record("s", "/new", now, n=1)
    _, top = present.refresh_feed(0, "?site=s&tz=UTC")
    assert [item.key for item in top] == ["p:/new"]
