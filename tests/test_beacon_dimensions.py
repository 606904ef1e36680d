"""The /hit beacon records dimensions and visitors; hostile values stay harmless."""

from __future__ import annotations

import datetime as dt
import json
from urllib.parse import urlencode

import pytest
from dashkit import counted, dashboard_app, register_sites

from dashboard.services import get_services
from queries.dimensions import reads

pytestmark = pytest.mark.usefixtures("frozen_clock")   # the same days at any hour

CHROME = ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
          "Chrome/126.0 Safari/537.36")


@pytest.fixture
def app(tmp_path):
    with dashboard_app(tmp_path / "store", rollup_interval=0) as app:
        register_sites(app, "blog")
        yield app


def _range():
    now = dt.datetime.now(dt.UTC)
    return now - dt.timedelta(hours=2), now + dt.timedelta(hours=2)


def _breakdown(services, by):
    frame = reads.breakdown(services.db, "blog", by, *_range())
    return dict(zip(frame["value"], frame["hits"], strict=True))


def test_beacon_hits_carry_referrer_utm_agent_and_visitors(app):
    client = app.server.test_client()
    headers = {"User-Agent": CHROME, "Referer": "https://blog.example/post/1"}
    query = urlencode({"site": "blog", "referrer": "https://news.example/front",
                       "page": "/post/1?utm_source=news.letter&utm_campaign=$spring"})
    response = client.get(f"/hit?{query}", headers=headers,
                          environ_base={"REMOTE_ADDR": "8.8.8.8"})
    assert response.status_code == 200
    client.post("/hit", data=json.dumps({"site": "blog", "page": "/post/2",
                                         "referrer": "https://blog.example/post/1"}),
                headers=headers, environ_base={"REMOTE_ADDR": "8.8.8.8"})
    client.get("/hit?site=blog&page=/", headers={"User-Agent": "curl/8.5.0"},
               environ_base={"REMOTE_ADDR": "2001:4860::8"})
    services = counted(app)
    # The second hit's ref is the page holding the beacon: the site itself.
    assert _breakdown(services, "referrer") == {"news.example": 1, "(direct)": 1,
                                                "(internal)": 1}
    assert _breakdown(services, "utm_source") == {"news.letter": 1, "(none)": 2}
    assert _breakdown(services, "utm_campaign") == {"$spring": 1, "(none)": 2}
    assert _breakdown(services, "bot") == {"human": 2, "bot": 1}
    assert _breakdown(services, "country") == {"US": 3}
    assert _breakdown(services, "status") == {"(none)": 3}
    assert reads.visitors(services.db, "blog", *_range()).n == 2
    assert reads.active_visitors(services.db, "blog") == (2, True)
    assert reads.active_visitors(services.db, "blog", dt.datetime.now(dt.UTC)
                                 + dt.timedelta(minutes=10)).visitors == 0


@pytest.mark.parametrize("query", [
    "site=blog&page=/&referrer=not%20a%20url",
    "site=blog&page=/&referrer=http://[::1",
    "site=blog&page=/?utm_source=" + "%24" * 200,
    "site=blog&page=/&referrer=" + "x" * 2000,
])
def test_hostile_dimension_values_are_harmless(app, query):
    client = app.server.test_client()
    response = client.get(f"/hit?{query}", headers={"User-Agent": "A" * 10_240})
    assert response.status_code == 200
    services = counted(app)
    assert sum(_breakdown(services, "referrer").values()) == 1


@pytest.mark.parametrize(("query", "said"), [
    ("site=blog&page=/?utm_source=" + "%24" * 201, "utm_source is 201 characters"),
    ("site=blog&page=/&referrer=" + "x" * 2049, "referrer is 2,049 characters"),
    ("site=blog&page=/&referrer=a%0Ab", "control character"),
    ("site=blog&page=/?utm_campaign=%01", "control character"),
    ("site=blog&page=/a%0A", "invalid page"),
])
def test_text_a_store_cannot_hold_or_past_its_limit_is_a_400(app, query, said):
    response = app.server.test_client().get(f"/hit?{query}")
    assert response.status_code == 400 and said in response.get_json()["error"]
    assert get_services(app.server).journal.file.size == 0          # nothing journaled


def test_a_lone_surrogate_anywhere_is_a_400_and_counting_goes_on(app):
    """JSON may escape a lone surrogate (``\\ud800``), which no database can store: it
    used to be answered 204, then stopped the recorder's thread, and no hit counted."""
    client = app.server.test_client()
    for body in ('{"site": "blog", "page": "/\\ud800"}',
                 '{"site": "blog", "page": "/?utm_source=\\udfff"}',
                 '{"site": "blog", "page": "/", "referrer": "https://x/\\ud800"}'):
        response = client.post("/hit", data=body, content_type="text/plain")
        assert response.status_code == 400, body
    for _ in range(300):
        assert client.post("/hit", data=json.dumps({"site": "blog", "page": "/ok"}),
                           content_type="text/plain").status_code == 204
    assert counted(app).journal.status().hits_written == 300
    assert client.get("/healthz").get_json()["status"] == "ok"


def test_a_repeated_or_non_string_referrer_is_a_400(app):
    client = app.server.test_client()
    assert client.get("/hit?site=blog&page=/&referrer=a&referrer=b").status_code == 400
    response = client.post("/hit", data=json.dumps({"site": "blog", "page": "/",
                                                    "referrer": {"$gt": ""}}))
    assert response.status_code == 400 and b"referrer must be a string" in response.data
