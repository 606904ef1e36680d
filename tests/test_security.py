"""Security: beacon values stay values, the server listens on loopback by default, and no
password reaches a page, an endpoint or a log (authority over state changes is in
test_authority.py, cross-site writes in test_same_origin.py)."""

from __future__ import annotations

import json
import logging
import re

import pytest
from click.testing import CliRunner
from dashkit import (
    counted,
    dashboard_app,
    free_port,
    post_callback,
    register_sites,
)
from fakes import stored_events

import queries
from dashboard import create_server
from dashboard.cli import main
from dashboard.cli import serve as serve_cli
from dashboard.services import get_services
from queries.stats import schema

STATS_FIELDS = {schema.DAILY: {"_id", "metadata", "daily", "hourly", "minute"},
                schema.MONTHLY: {"_id", "metadata", "monthly", "daily"}}
BOOKKEEPING = {"flushes", "bots"}  # the exactly-once marks, keyed by recorder id; bot hits
PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]+")


def keys(doc: dict):
    for key, value in doc.items():
        yield key
        if isinstance(value, dict):
            yield from keys(value)


# -- values never become field names or filters -----------------------------------------

@pytest.fixture
def app(tmp_path):
    with dashboard_app(tmp_path / "store", rollup_interval=0) as app:
        register_sites(app, "a.b", "blog", "s")
        yield app


def test_operator_looking_pages_and_sites_are_stored_as_plain_values(app):
    client = app.server.test_client()
    pages = ["/$where", "/a.b", '/{"$gt":""}', "/$gt.$ne", "/x.y.z"]
    for page in pages:
        body = json.dumps({"site": "a.b", "page": page})
        assert client.post("/hit", data=body).status_code == 204
    assert client.get("/hit", query_string={"site": "a.b", "page": "$where"}).status_code == 200
    services = counted(app)
    db = services.db
    assert queries.list_sites(db) == ["a.b"]
    assert queries.list_pages(db, "a.b") == sorted(pages)
    for collection, fields in STATS_FIELDS.items():
        for doc in db[collection].find({"metadata.site": "a.b"}):
            assert fields <= set(doc) <= fields | BOOKKEEPING, doc["_id"]
            assert all(PLAIN_KEY.fullmatch(key) for key in keys(doc)), doc  # no value as a key
            assert doc["metadata"]["page"] in [*pages, "*"]
    assert db[schema.DAILY].count_documents({"metadata.page": "/$where"}) == 1
    assert sorted(e["path"] for e in stored_events(db, "a.b")) == sorted(
        [*pages, "/$where"])


@pytest.mark.parametrize("query", [
    "site=blog&page=/a&page[$ne]=x",
    "site=blog&page%5B%24ne%5D=",
    "site=blog&page[$regex]=.*",
    "site[$ne]=x&page=/a",
    "site=blog&page=/a&$where=1",
])
def test_operators_in_query_string_keys_are_refused(app, query):
    response = app.server.test_client().get("/hit?" + query)
    assert response.status_code == 400 and "unexpected parameter" in response.get_json()["error"]


@pytest.mark.parametrize("body", [
    {"site": "blog", "page": {"$ne": None}},
    {"site": "blog", "page": {"$regex": ".*"}},
    {"site": {"$in": ["blog"]}, "page": "/a"},
    {"site": "blog", "page": [{"$gt": ""}]},
])
def test_operators_in_json_values_are_refused(app, body):
    response = app.server.test_client().post("/hit", data=json.dumps(body))
    assert response.status_code == 400 and "must be a string" in response.get_json()["error"]
    assert queries.list_sites(counted(app).db) == []


# -- loopback by default -----------------------------------------------------------------

def test_serve_binds_loopback_unless_told_otherwise(tmp_path, monkeypatch):
    binds = []
    monkeypatch.setattr(serve_cli, "run_gunicorn",
                        lambda settings: binds.append(serve_cli.gunicorn_options(settings)["bind"]))
    monkeypatch.delenv("HITBOARD_HOST", raising=False)
    monkeypatch.delenv("HITBOARD_PORT", raising=False)
    runner = CliRunner()
    assert runner.invoke(main, ["serve", "--store", str(tmp_path)]).exit_code == 0
    assert runner.invoke(main, ["serve", "--store", str(tmp_path), "--host", "0.0.0.0"],
                         ).exit_code == 0
    monkeypatch.setenv("HITBOARD_HOST", "::1")
    assert runner.invoke(main, ["serve", "--store", str(tmp_path)]).exit_code == 0
    assert binds == ["127.0.0.1:8050", "0.0.0.0:8050", "::1:8050"]


# -- no password in pages, endpoints or logs ----------------------------------------------

SECRET = "pw-Zq81-not-for-logs"


def test_a_store_uri_password_never_shows(tmp_path, monkeypatch, caplog):
    """A MongoDB URI with a password for a server that is down: every page, /healthz, the
    callbacks' errors and the logs name the server without the password."""
    caplog.set_level(logging.DEBUG)
    uri = (f"mongodb://hitboard:{SECRET}@127.0.0.1:{free_port()}/hb"
           "?serverSelectionTimeoutMS=150&connectTimeoutMS=150")
    monkeypatch.setenv("HITBOARD_STORE", uri)
    started = []

    def boot(settings):                              # what a gunicorn worker does at boot
        started.append(create_server(settings))

    monkeypatch.setattr(serve_cli, "run_gunicorn", boot)
    result = CliRunner().invoke(main, ["serve", "--readonly"])
    assert result.exit_code == 0, result.output
    assert "hitboard:***@127.0.0.1" in result.output and SECRET not in result.output
    server = started[0]
    try:
        client = server.test_client()
        health = client.get("/healthz")
        assert health.status_code == 503 and health.get_json()["status"] == "error"
        served = [health.get_data(as_text=True)]
        for path in ("/", "/data", "/history", "/rollups", "/loadgen"):
            served.append(client.get(path).get_data(as_text=True))
            page = post_callback(client, ["_pages_content.children", "_pages_store.data"],
                                 {"_pages_location.pathname": path,
                                  "_pages_location.search": "?site=s"},
                                 changed=("_pages_location.pathname",))
            served.append(page.get_data(as_text=True))
        data = post_callback(client, ["data-content.children"], {"url.search": "?site=s"})
        served.append(data.get_data(as_text=True))
        assert "hitboard:***@127.0.0.1" in served[-1]
        live = post_callback(client, ["live-graph.figure", "live-kpis.children",
                                      "live-top.children", "live-updated.data",
                                      "live-alert.children"],
                             {"live-interval.n_intervals": 1, "url.search": "?site=s"})
        served.append(live.get_data(as_text=True))
        assert "ServerSelectionTimeoutError" in served[-1]       # the failure is shown...
        for text in served:
            assert SECRET not in text                          # ...without the password
    finally:
        get_services(server).close()
    assert "ServerSelectionTimeoutError" in caplog.text          # logged, with traceback
    assert SECRET not in caplog.text
