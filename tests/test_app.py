"""dashboard.app: the factory, its services, its extension hooks, ``hitboard serve``."""

import datetime as dt
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import dash
import flask
import pytest
from dashkit import dashboard_app, free_port

import queries
from dashboard import create_server
from dashboard.cli.serve import gunicorn_options
from dashboard.services import get_services
from dashboard.settings import InvalidSettingError, resolve

pytestmark = pytest.mark.usefixtures("frozen_clock")   # the same days at any hour


def test_app_owns_one_connection_and_one_recorder(tmp_path):
    with dashboard_app(tmp_path / "store", flush_interval=0.1) as app:
        services = get_services(app.server)
        assert services.settings.flush_interval == 0.1
        services.recorder.record("s", "/a", dt.datetime.now(dt.UTC))
        services.recorder.flush()
        assert queries.list_sites(services.db) == ["s"]
        with app.server.app_context():
            assert get_services() is services
    assert services.closed


def test_pages_are_registered_and_the_layout_is_served(tmp_path):
    with dashboard_app(tmp_path / "store") as app:
        paths = {page["path"] for page in dash.page_registry.values()}
        assert {"/", "/history"} <= paths
        client = app.server.test_client()
        assert client.get("/").status_code == 200
        assert client.get("/history?site=s&tz=Europe/Paris").status_code == 200
        layout = client.get("/_dash-layout")
        assert layout.status_code == 200
        assert b"shell-site" in layout.data


def test_every_page_loads_the_plotly_js_basic_bundle_of_plotlys_own_version(tmp_path):
    """Its charts are scatter and bar traces: plotly.js's basic bundle (1.2 MB, loaded
    with the page, so dcc.Graph never fetches the full 4.8 MB one), of the version the
    plotly package writes its figures for."""
    from plotly.offline import get_plotlyjs_version

    with dashboard_app(tmp_path / "store") as app:
        page = app.server.test_client().get("/history").get_data(as_text=True)
        bundle = app.server.test_client().get("/assets/vendor/plotly-basic.min.js")
    assert 'src="/assets/vendor/plotly-basic.min.js' in page
    header = bundle.get_data(as_text=True)[:200]
    bundle.close()
    assert f"plotly.js (basic - minified) v{get_plotlyjs_version()}\n" in header


def test_health_route_is_installed_by_the_extension_hooks(tmp_path):
    with dashboard_app(tmp_path / "store") as app:
        response = app.server.test_client().get("/healthz")
        assert response.status_code == 200
        body = response.get_json()
        assert body["status"] == "ok"
        assert body["backend"] == "embedded"
        assert body["recorder"]["hits_accepted"] == 0


def test_readonly_app_has_no_recorder(tmp_path):
    queries.connect(str(tmp_path / "store")).client.close()
    with dashboard_app(tmp_path / "store", readonly=True) as app:
        assert get_services(app.server).recorder is None
        assert app.server.test_client().get("/healthz").get_json()["recorder"] is None


def test_services_close_flushes_pending_hits(tmp_path):
    with dashboard_app(tmp_path / "store", flush_interval=3600) as app:
        services = get_services(app.server)
        services.recorder.record("s", "/a", dt.datetime.now(dt.UTC), n=5)
        stopped = []
        services.on_close(lambda: stopped.append(True))
    assert stopped == [True]
    db = queries.connect(str(tmp_path / "store"))
    try:
        today = dt.datetime.now(dt.UTC)
        assert queries.top_pages(db, "s", today - dt.timedelta(hours=1),
                                 today + dt.timedelta(minutes=1))["hits"].tolist() == [5]
    finally:
        db.client.close()


def test_create_server_returns_the_flask_app_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("HITBOARD_STORE", str(tmp_path / "env-store"))
    server = create_server()
    try:
        assert isinstance(server, flask.Flask)
        assert get_services(server).settings.store == str(tmp_path / "env-store")
    finally:
        get_services(server).close()


def test_bad_setting_fails_before_anything_opens(tmp_path):
    from dashboard import create_app

    with pytest.raises(InvalidSettingError):
        create_app({"store": str(tmp_path), "threads": 0})


def test_gunicorn_runs_threads_in_one_process_by_default():
    options = gunicorn_options(resolve({}, environ={}))
    assert options["bind"] == "127.0.0.1:8050"
    assert options["worker_class"] == "dashboard.frontdoor.worker.FrontDoorWorker"
    assert (options["workers"], options["threads"]) == (1, 8)


@pytest.mark.slow
def test_hitboard_serve_answers_over_http(tmp_path):
    port = free_port()
    env = {**os.environ, "HITBOARD_STORE": str(tmp_path / "store")}
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "hitboard"), "serve", "--port", str(port),
         "--threads", "2"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        body = None
        deadline = time.monotonic() + 60      # limits: a loaded machine renders slowly
        while time.monotonic() < deadline and body is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=60) as response:
                    body = response.read().decode()
            except OSError:
                time.sleep(0.2)
        assert body is not None, "hitboard serve did not answer within 60 s"
        assert "_dash-config" in body
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_app_is_set_up_before_its_first_request(tmp_path):
    """Dash sets itself up at the first request and marks it done as it begins: two
    browsers opening a fresh server at once got a page without its title function."""
    from dash._callback import GLOBAL_CALLBACK_MAP

    with dashboard_app(tmp_path / "store") as app:
        assert app._got_first_request["setup_server"]
        assert not GLOBAL_CALLBACK_MAP            # every page's callbacks taken
        assert any("history-graph" in key for key in app.callback_map)
