"""dashboard/routes/beacon_gate.py: the /hit beacon counts registered sites only, from their own
origins; strangers register new ones only at a bounded rate; a site's new pages a day are
capped, the rest counted under /(other). A flood of names grows nothing."""

from __future__ import annotations

import datetime as dt
import json
from contextlib import contextmanager

import pytest
import time_machine
from click.testing import CliRunner
from dashkit import counted, dashboard_app, register_sites

import queries
from dashboard.cli import main
from dashboard.routes.beacon_gate import OTHER_PAGE
from dashboard.services import get_services
from queries.stats.sites import site_settings
from queries.stats.writes import preallocate


def _post(client, site: str, page: str = "/", origin: str | None = None):
    headers = {"Origin": origin} if origin else {}
    return client.post("/hit", data=json.dumps({"site": site, "page": page}),
                       content_type="text/plain", headers=headers)


@pytest.fixture(autouse=True)
def clock():
    """A day's middle, the clock running on: a test's hits never straddle midnight (a
    new UTC day starts the day's caps afresh)."""
    with time_machine.travel(dt.datetime(2026, 3, 12, 12, 0, tzinfo=dt.UTC), tick=True):
        yield


@pytest.fixture
def closed(tmp_path):
    with dashboard_app(tmp_path / "store", rollup_interval=0) as app:
        yield app


def test_an_unregistered_site_is_refused_until_it_is_added(closed, tmp_path):
    client = closed.server.test_client()
    response = _post(client, "blog")
    assert response.status_code == 403 and "hitboard site add" in response.get_json()["error"]
    result = CliRunner().invoke(main, ["site", "add", "blog", "--origin",
                                       "https://blog.example.com", "--store",
                                       str(tmp_path / "store")])
    assert result.exit_code == 0, result.output
    get_services(closed.server).sites.forget("blog")
    assert _post(client, "blog", origin="https://blog.example.com").status_code == 204
    assert _post(client, "blog").status_code == 204                 # no Origin: a script
    refused = _post(client, "blog", origin="https://evil.example")
    assert refused.status_code == 403 and "may not send hits" in refused.get_json()["error"]
    assert counted(closed).journal.status().hits_written == 2
    services = get_services(closed.server)
    assert queries.list_sites(services.db) == ["blog"]


def test_sites_holding_data_before_the_registry_keep_working(tmp_path):
    store = tmp_path / "store"
    db = queries.connect(str(store))
    with queries.HitRecorder(db) as recorder:
        recorder.record("old", "/", None)
    db.client.close()
    with dashboard_app(store, rollup_interval=0) as app:
        assert site_settings(get_services(app.server).db, "old").via == "existing"
        assert _post(app.server.test_client(), "old").status_code == 204


def test_open_registration_is_bounded_per_hour_and_strict_on_names(tmp_path):
    with dashboard_app(tmp_path / "store", rollup_interval=0, beacon_new_sites=3) as app:
        client = app.server.test_client()
        for bad in (".", "..", "-", "a-"):
            assert _post(client, bad).status_code == 400, bad
        assert [_post(client, f"s{i}").status_code for i in range(5)] == [204] * 3 + [429] * 2
        assert _post(client, "s1").status_code == 204               # registered: counted
        assert site_settings(get_services(app.server).db, "s0").via == "beacon"


@contextmanager
def blog_app(tmp_path, **settings):
    """The dashboard, rollups off, with the site ``blog`` registered."""
    with dashboard_app(tmp_path / "store", rollup_interval=0, **settings) as app:
        register_sites(app, "blog")
        yield app


def post_pages(app, pages) -> None:
    """A beacon hit on ``blog`` for each page, every one answered 204, then flushed."""
    client = app.server.test_client()
    for page in pages:
        assert _post(client, "blog", page).status_code == 204
    counted(app)


def top_today(app):
    return queries.top_pages(get_services(app.server).db, "blog", *_today())


def test_new_pages_past_the_days_cap_count_under_other(tmp_path):
    with blog_app(tmp_path, beacon_pages_per_day=5) as app:
        post_pages(app, [f"/p{i}" for i in range(12)] + ["/p0"])   # /p0: a page of the day
        services = get_services(app.server)
        pages = queries.list_pages(services.db, "blog")
        assert pages == sorted([OTHER_PAGE] + [f"/p{i}" for i in range(5)])
        top = top_today(app)
        assert top.loc[OTHER_PAGE, "hits"] == 7 and top.loc["/p0", "hits"] == 2
        assert services.journal.status().hits_written == 13       # every hit counted


def test_unseen_pages_past_their_share_get_their_name_when_they_come_back(tmp_path):
    """Past ``beacon_unseen_pages`` a day, a page the site never had counts its first hit
    under /(other) and gets its own name at its second; a page the site had last month
    is no stranger. Every hit is counted once."""
    with blog_app(tmp_path, beacon_unseen_pages=2) as app:
        services = get_services(app.server)
        last_month = dt.datetime.now(dt.UTC).replace(day=1) - dt.timedelta(days=1)
        services.recorder.record("blog", "/known", last_month)
        services.recorder.flush()
        post_pages(app, ("/a", "/b", "/c", "/d", "/known", "/c", "/c", "/e"))
        assert top_today(app)["hits"].to_dict() == {"/a": 1, "/b": 1, "/c": 2, "/known": 1,
                                                    OTHER_PAGE: 3}
        assert services.journal.status().hits_written == 8       # every hit counted


def test_a_flood_of_unseen_pages_sent_once_stores_a_share_of_them(tmp_path):
    with blog_app(tmp_path, beacon_unseen_pages=10) as app:
        post_pages(app, [f"/made-up/{i}" for i in range(500)])
        assert len(queries.list_pages(get_services(app.server).db, "blog")) == 10 + 1
        assert top_today(app).loc[OTHER_PAGE, "hits"] == 490


def test_a_real_page_gets_its_name_after_a_flood_fills_the_waiting_pages(tmp_path):
    """50 pages wait at most (the cap), 300 made-up ones came first; a real
    page sent after them still gets its name at its second hit."""
    with blog_app(tmp_path, beacon_pages_per_day=50, beacon_unseen_pages=2) as app:
        post_pages(app, [f"/made-up/{i}" for i in range(300)] + ["/good"] * 5)
        top = top_today(app)
        assert top.loc["/good", "hits"] == 4 and top.loc[OTHER_PAGE, "hits"] == 299
        assert len(top) == 2 + 2                 # the two unseen ones admitted at once


def test_a_page_coming_back_after_more_new_pages_than_wait_is_named_at_its_third_hit(
        tmp_path):
    """Between its hits, 200 new pages push it out of the 50 waiting each time: the
    sketch remembers it was pushed out twice."""
    with blog_app(tmp_path, beacon_pages_per_day=50, beacon_unseen_pages=0) as app:
        flood = iter(f"/made-up/{i}" for i in range(600))
        post_pages(app, ["/good", *(next(flood) for _ in range(200)),
                         "/good", *(next(flood) for _ in range(200)), "/good", "/good"])
        top = top_today(app)
        assert top.loc["/good", "hits"] == 2 and top.loc[OTHER_PAGE, "hits"] == 402
        assert len(top) == 2


def test_a_flooded_site_is_forgotten_before_its_neighbours(tmp_path, monkeypatch):
    """Past MAX_TRACKED entries in all, the gate forgets the day holding the most: the
    flooded site's waiting pages, not a page waiting on another site."""
    from dashboard.routes import beacon_gate
    monkeypatch.setattr(beacon_gate, "MAX_TRACKED", 100)
    with blog_app(tmp_path, beacon_unseen_pages=0) as app:
        register_sites(app, "shop", "docs")
        client = app.server.test_client()
        assert _post(client, "shop", "/real").status_code == 204
        for i in range(150):
            assert _post(client, "blog", f"/made-up/{i}").status_code == 204
        assert _post(client, "docs", "/").status_code == 204       # a new day: room made
        assert _post(client, "shop", "/real").status_code == 204   # still waiting: named
        top = queries.top_pages(counted(app).db, "shop", *_today())
        assert top["hits"].to_dict() == {OTHER_PAGE: 1, "/real": 1}


def test_pages_preallocated_for_today_are_not_new_pages_of_the_day(tmp_path):
    """Yesterday's last hour gave today zero-filled documents for its returning pages:
    they are pages the site had, not new ones, and leave today's cap whole."""
    with blog_app(tmp_path, beacon_pages_per_day=3) as app:
        for i in range(8):
            preallocate(get_services(app.server).db, dt.datetime.now(dt.UTC), "blog",
                        f"/old{i}")
        post_pages(app, ("/new0", "/new1", "/new2", "/new3", "/old5"))
        assert set(top_today(app).index) == {"/new0", "/new1", "/new2", OTHER_PAGE, "/old5"}


def test_a_flood_of_names_stores_nothing_new(closed):
    """20,000 made-up sites and a page flood on a registered one: nothing registered,
    nothing stored for them, every page past the cap under /(other)."""
    register_sites(closed, "blog")
    client = closed.server.test_client()
    for i in range(2_000):
        assert _post(client, f"flood{i}").status_code == 403
    services = counted(closed)
    assert queries.list_sites(services.db) == []
    assert services.db["sites"].count_documents({}) == 1
    assert len(services.sites._held) <= services.sites.max_sites


def _today():
    now = dt.datetime.now(dt.UTC)
    return now - dt.timedelta(hours=1), now + dt.timedelta(hours=1)
