"""The /hit beacon: responses, validation (operator injection included), allow-list."""

from __future__ import annotations

import datetime as dt
import json
from urllib.parse import urlencode

import pytest
from dashkit import counted, dashboard_app, register_sites
from fakes import stored_events

import queries
from dashboard.routes.beacon import GIF, MAX_BODY
from dashboard.services import get_services
from queries.dimensions import reads
from queries.events import apart
from queries.events import custom as custom_raw
from queries.events.buckets import events as bucket_events
from queries.journal.log import JournalError
from queries.stats.sites import site_settings, update_site

pytestmark = pytest.mark.usefixtures("frozen_clock")   # the same hours at any hour


@pytest.fixture
def app(tmp_path):
    with dashboard_app(tmp_path / "store", rollup_interval=0) as app:
        register_sites(app, "blog", "shop", "other")
        yield app


def written(app):
    return counted(app)


def test_get_answers_a_gif_and_counts_the_hit(app):
    client = app.server.test_client()
    response = client.get("/hit?site=blog&page=/post/1?utm=x",
                          headers={"User-Agent": "ua", "Referer": "https://blog/post/1"})
    assert response.status_code == 200 and response.mimetype == "image/gif"
    assert response.data == GIF and "no-store" in response.headers["Cache-Control"]
    services = written(app)
    assert queries.list_pages(services.db, "blog") == ["/post/1"]
    (event,) = stored_events(services.db, "blog")
    assert (event["path"], event["query"], event["user_agent"]) == ("/post/1", "utm=x", "ua")


def test_post_json_answers_204_whatever_the_content_type(app):
    client = app.server.test_client()
    body = json.dumps({"site": "blog", "page": "/about"})
    for content_type in ("text/plain;charset=UTF-8", "application/json"):
        response = client.post("/hit", data=body, content_type=content_type)
        assert response.status_code == 204 and response.data == b""
    services = written(app)
    assert queries.top_pages(services.db, "blog", *day_range())["hits"].to_dict() == {
        "/about": 2}


def day_range():
    now = dt.datetime.now(dt.UTC)
    return now - dt.timedelta(hours=1), now + dt.timedelta(hours=1)


@pytest.mark.parametrize("query, reason", [
    ("site=blog", "missing page"),
    ("page=/a", "missing site"),
    ("site=blog&page=/a&page=/b", "give page exactly once"),
    ("site=blog&page[$ne]=", "unexpected parameter"),
    ("site[$gt]=&page=/a", "unexpected parameter"),
    ("site=blog&page=/a&x=1", "unexpected parameter"),
    ("site=bad site&page=/a", "invalid site"),
    ("site=blog&page=*", "whole site"),
    ("site=blog&page=" + "a" * 3000, "at most 2048"),
])
def test_get_validation(app, query, reason):
    response = app.server.test_client().get("/hit?" + query)
    assert response.status_code == 400
    assert reason in response.get_json()["error"]


@pytest.mark.parametrize("body, reason", [
    ('{"site": "blog", "page": {"$gt": ""}}', "page must be a string, got an object"),
    ('{"site": {"$ne": null}, "page": "/a"}', "site must be a string"),
    ('{"site": "blog", "page": ["/a"]}', "page must be a string, got an array"),
    ('{"site": "blog", "page": null}', "page must be a string, got null"),
    ('{"site": "blog", "page": 3}', "page must be a string, got a number"),
    ('{"site": "blog"}', "missing page"),
    ('{"site": "blog", "page": "/a", "$where": "1"}', "unexpected field"),
    ('["blog", "/a"]', "JSON object"),
    ("site=blog&page=/a", "must be JSON"),
    (b"\xff\xfe", "must be JSON"),
])
def test_post_validation(app, body, reason):
    response = app.server.test_client().post("/hit", data=body, content_type="text/plain")
    assert response.status_code == 400
    assert reason in response.get_json()["error"]
    assert queries.list_sites(written(app).db) == []


@pytest.mark.parametrize("sent, stored", [
    ("/nature%E2%80%99s-essence", "/nature\u2019s-essence"),   # location.pathname's form
    ("caf%C3%A9", "/caf\u00e9"),
    ("/100%25", "/100%"),
    ("/a%2Fb%00%FF+", "/a%2Fb%00%FF+"),                       # validation.decoded_path's rules
])
def test_the_page_is_stored_decoded_counted_and_kept_so(app, sent, stored):
    client = app.server.test_client()
    assert client.get("/hit?" + urlencode({"site": "blog", "page": sent})).status_code == 200
    body = json.dumps({"site": "blog", "page": sent + "?utm_source=x%20y"})
    assert client.post("/hit", data=body).status_code == 204
    services = written(app)
    assert queries.list_pages(services.db, "blog") == [stored]
    assert {(e["path"], e["query"]) for e in stored_events(services.db, "blog")} == {
        (stored, ""), (stored, "utm_source=x%20y")}
    pages = reads.breakdown(services.db, "blog", "page", *day_range())
    assert dict(zip(pages["value"], pages["hits"], strict=True)) == {stored: 2}


@pytest.mark.parametrize("page, status, reason", [
    ("/" + "%41" * 2047, 200, None),                        # 6,142 sent, 2,048 decoded
    ("/" + "%41" * 2048, 400, "2049 characters, at most 2048"),
    ("%2A", 400, "whole site"),                              # "*" once decoded
])
def test_the_page_limits_apply_once_decoded(app, page, status, reason):
    response = app.server.test_client().get("/hit?" + urlencode({"site": "blog", "page": page}))
    assert response.status_code == status
    if reason:
        assert reason in response.get_json()["error"]
    else:
        assert queries.list_pages(written(app).db, "blog") == ["/" + "A" * 2047]


def test_oversized_body_is_413(app):
    body = json.dumps({"site": "blog", "page": "/" + "a" * (MAX_BODY + 1)})
    assert app.server.test_client().post("/hit", data=body).status_code == 413


def test_allow_list(tmp_path):
    with dashboard_app(tmp_path / "store", beacon_sites="blog, shop",
                       rollup_interval=0) as app:
        client = app.server.test_client()
        assert client.get("/hit?site=shop&page=/").status_code == 200
        refused = client.get("/hit?site=other&page=/")
        assert refused.status_code == 403 and "not accepted" in refused.get_json()["error"]


def test_a_read_only_server_refuses_hits(tmp_path):
    with dashboard_app(tmp_path / "store"):
        pass                                     # create the store
    with dashboard_app(tmp_path / "store", readonly=True) as app:
        response = app.server.test_client().get("/hit?site=blog&page=/")
        assert response.status_code == 503 and "read-only" in response.get_json()["error"]


def test_a_journal_past_its_backlog_is_503(app, monkeypatch):
    services = get_services(app.server)
    monkeypatch.setattr(services.journal, "max_backlog", 0)
    response = app.server.test_client().get("/hit?site=blog&page=/")
    assert response.status_code == 503 and response.headers["Retry-After"] == "5"
    assert "try again later" in response.get_json()["error"]


def test_a_hit_the_journal_could_not_write_is_503_and_not_counted(app, monkeypatch, caplog):
    services = get_services(app.server)

    def full(*_a, **_k):
        raise JournalError("the journal could not be written: [Errno 28] No space left")

    monkeypatch.setattr(services.journal.file, "append", full)
    response = app.server.test_client().get("/hit?site=blog&page=/")
    assert response.status_code == 503 and response.headers["Retry-After"] == "5"
    monkeypatch.undo()
    assert app.server.test_client().get("/hit?site=blog&page=/b").status_code == 200
    assert queries.list_pages(written(app).db, "blog") == ["/b"]
    assert "a hit on blog refused: the journal could not be written" in caplog.text


def test_a_custom_event_is_kept_as_sent_and_not_counted_as_a_page_view(app):
    client = app.server.test_client()
    body = {"site": "blog", "page": "/pricing", "event": "Signup", "props": {"plan": "pro"},
            "revenue": {"currency": "EUR", "amount": "49.00"}}
    response = client.post("/hit", data=json.dumps(body), content_type="text/plain",
                           headers={"User-Agent": "ua"})
    assert response.status_code == 204
    services = written(app)
    assert queries.list_pages(services.db, "blog") == []
    (kept,) = services.db[custom_raw.COLLECTION].find({}, {"_id": 0, "time": 0,
                                                           "ingested": 0})
    assert kept == {"site": "blog", "page": "/pricing", "name": "Signup",
                    "props": [["plan", "pro"]], "revenue": ["EUR", "49.00"], "host": "127.0.0.1",
                    "user_agent": "ua", "n": 1}


@pytest.mark.parametrize("body, reason", [
    ({"event": "Signup", "props": {"plan": ["pro"]}}, "must be a string"),
    ({"event": {"$gt": ""}}, "non-empty string"),
    ({"event": "Sign\ud800up"}, "not valid Unicode"),
    ({"props": {"plan": "pro"}}, "belong to a custom event"),
    ({"event": "Signup", "revenue": {"currency": "EUR", "amount": "1,00"}}, "decimal"),
    ({"event": "Signup", "props": {f"k{i}": "v" for i in range(31)}}, "at most 30"),
])
def test_a_malformed_custom_event_is_a_400_and_nothing_is_kept(app, body, reason):
    data = json.dumps({"site": "blog", "page": "/a", **body}).encode()
    response = app.server.test_client().post("/hit", data=data, content_type="text/plain")
    assert response.status_code == 400 and reason in response.get_json()["error"]
    services = written(app)
    assert services.db[custom_raw.COLLECTION].count_documents({}) == 0


def test_an_engagement_is_kept_and_a_bad_one_refused(app):
    client = app.server.test_client()
    good = {"site": "blog", "page": "/a", "engagement": 42_000}
    assert client.post("/hit", data=json.dumps(good)).status_code == 204
    for bad, reason in [({"engagement": -1}, "whole milliseconds"),
                        ({"engagement": 1.5}, "whole milliseconds"),
                        ({"engagement": "42"}, "whole milliseconds"),
                        ({"engagement": 10 ** 12}, "whole milliseconds"),
                        ({"engagement": 1, "event": "Signup"}, "sent alone")]:
        response = client.post("/hit", data=json.dumps({"site": "blog", "page": "/a", **bad}))
        assert response.status_code == 400 and reason in response.get_json()["error"], bad
    services = written(app)
    assert [d["engaged"] for d in services.db[custom_raw.COLLECTION].find()] == [42_000]
    assert queries.list_pages(services.db, "blog") == []


def test_a_site_counting_its_logs_keeps_its_beacon_hits_apart(app):
    services = get_services(app.server)
    update_site(services.db, "shop", primary_source="log")
    client = app.server.test_client()
    assert client.get("/hit?site=shop&page=/a").status_code == 200
    assert client.post("/hit", data=json.dumps({"site": "shop", "page": "/b"})).status_code == 204
    assert client.post("/hit", data=json.dumps({"site": "blog", "page": "/c"})).status_code == 204
    written(app)
    assert queries.list_pages(services.db, "shop") == []          # not counted twice
    assert queries.list_pages(services.db, "blog") == ["/c"]      # its first source
    assert site_settings(services.db, "blog").primary_source == "beacon"
    kept = [e["path"] for b in services.db[apart.COLLECTION].find()
            for e in bucket_events(b, range(b["n"]))]
    assert sorted(kept) == ["/a", "/b"]
