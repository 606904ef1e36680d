"""POST/GET /api/annotations: a deploy script marks a deploy; bad input is a 400, never a 500."""

import json

import pytest
from dashkit import ADMIN_TOKEN, dashboard_app

from dashboard.services import get_services
from queries import annotations as notes

TOKEN = "s3cret-token-of-the-deploy-job"


@pytest.fixture
def guarded(tmp_path):
    with dashboard_app(tmp_path / "store", rollup_interval=0, admin_token=TOKEN) as app:
        yield app


def post(client, body, token=ADMIN_TOKEN, raw=None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return client.post("/api/annotations", data=raw if raw is not None else json.dumps(body),
                       headers=headers, content_type="application/json")


def test_a_deploy_is_marked_and_read_back(guarded):
    client = guarded.server.test_client()
    made = post(client, {"site": "blog", "time": "2026-11-21T14:00:00+01:00",
                         "text": "deployed v2.3", "kind": "deploy", "author": "ci"}, TOKEN)
    assert made.status_code == 201, made.get_json()
    ident = made.get_json()["id"]
    listed = client.get("/api/annotations?site=blog&start=2026-11-21T00:00Z"
                        "&end=2026-11-22T00:00Z").get_json()["annotations"]
    assert listed == [{"id": ident, "site": "blog", "time": "2026-11-21T13:00:00+00:00",
                       "text": "deployed v2.3", "kind": "deploy", "author": "ci"}]
    assert client.get("/api/annotations").get_json()["annotations"][0]["id"] == ident


def test_a_good_a_wrong_and_no_token(guarded):
    client = guarded.server.test_client()
    missing = post(client, {"text": "x"}, None)
    assert missing.status_code == 401
    assert missing.headers["WWW-Authenticate"] == 'Bearer realm="hitboard"'
    assert "Authorization: Bearer" in missing.get_json()["error"]
    wrong = post(client, {"text": "x"}, "wrong")
    assert wrong.status_code == 401 and "wrong" in wrong.get_json()["error"]
    ok = post(client, {"text": "now, all sites"}, TOKEN)
    assert ok.status_code == 201
    db = get_services(guarded.server).db
    assert [a["site"] for a in notes.list_annotations(db)] == ["*"]


@pytest.mark.parametrize(("body", "reason"), [
    ({"text": "x", "time": "2026-11-21T14:00"}, "no time zone"),
    ({"text": "x", "time": "soon"}, "invalid time"),
    ({"text": "x", "time": 5}, "ISO 8601 string"),
    ({"text": "x" * 281}, "at most 280"),
    ({"text": {"$gt": ""}}, "must be a string"),
    ({"text": "x", "kind": "party"}, "unknown kind"),
    ({"text": "x", "site": {"$ne": ""}}, "invalid site"),
    ({"text": "x", "extra": 1}, "unexpected field"),
    ({"kind": "deploy"}, "missing text"),
    ([1, 2], "JSON object"),
])
def test_bad_input_is_a_400_with_the_reason(app, body, reason):
    response = post(app.server.test_client(), body)
    assert response.status_code == 400
    assert reason in response.get_json()["error"]


def test_junk_bodies_and_queries_are_400s(app):
    client = app.server.test_client()
    assert post(client, None, raw=b"\xff\xfe").status_code == 400
    assert post(client, None, raw=b"[" * 10000).status_code == 400
    assert post(client, None, raw=b"x" * 9000).status_code == 400
    assert client.get("/api/annotations?start=2026-11-21").status_code == 400
    assert client.get("/api/annotations?site=$where").status_code == 400
