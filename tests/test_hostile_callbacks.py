"""Every callback of the app posted with what no browser sends: values
of the wrong type, a figure where a string goes, inputs nested 100,000 deep. Each is a
400 with one line in the log, never a 500 with a traceback; the callbacks are found in
``/_dash-dependencies``, as a stranger would find them."""

from __future__ import annotations

import http.client
import json
import logging
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from dashkit import ADMIN_TOKEN, dashboard_app, free_port, register_sites
from test_faults_serve import WAIT, wait_until_serving

CALLBACK = "/_dash-update-component"
# Values of every JSON type, a few of each shape a callback might trip on.
WRONG = ["x", "", 7, -1, 1e308, True, None, [], [1, "a", None], {}, {"a": {"b": [1]}},
         "9" * 5000, [[[[[[[[[["deep"]]]]]]]]]], {"props": {"children": 3}}]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with dashboard_app(tmp_path_factory.mktemp("store"), rollup_interval=0) as app:
        register_sites(app, "blog")
        yield app


def callbacks(client) -> list[dict]:
    response = client.get("/_dash-dependencies")
    assert response.status_code == 200
    return [c for c in response.get_json() if not c.get("clientside_function")]


def _property(dependency: dict, value):
    """A dependency as the browser sends it; a pattern-matching one (its id a dict, in
    JSON) as a list of none."""
    if dependency["id"].startswith("{"):
        return []
    return {"id": dependency["id"], "property": dependency["property"], "value": value}


def _outputs(callback: dict):
    parts = [part.split("@")[0] for part in
             (callback["output"][2:-2].split("...") if callback["output"].startswith("..")
              else [callback["output"]])]
    shaped = []
    for part in parts:
        component, _, prop = part.rpartition(".")
        shaped.append([] if component.startswith("{") else {"id": component, "property": prop})
    return shaped if callback["output"].startswith("..") else shaped[0]


def body(callback: dict, value) -> dict:
    inputs = [_property(d, value) for d in callback["inputs"]]
    return {"output": callback["output"], "outputs": _outputs(callback), "inputs": inputs,
            "state": [_property(d, value) for d in callback["state"]],
            "changedPropIds": [f"{d['id']}.{d['property']}" for d in callback["inputs"][:1]
                               if not d["id"].startswith("{")]}


def post(client, data: str | bytes):
    return client.post(CALLBACK, data=data, content_type="application/json",
                       headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})


def test_every_callback_given_wrong_types_answers_without_a_500_or_a_traceback(app, caplog):
    client = app.server.test_client()
    found = callbacks(client)
    assert len(found) >= 40
    statuses, failures = {}, []
    with caplog.at_level(logging.INFO):
        for callback in found:
            for value in WRONG:
                response = post(client, json.dumps(body(callback, value)))
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
                if response.status_code >= 500:
                    failures.append((callback["output"], value, response.status_code))
    assert failures == []
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
    refused = [r for r in caplog.records if "callback refused" in r.getMessage()]
    assert len(refused) == statuses.get(400, 0)                 # one line each
    assert all("\n" not in r.getMessage() for r in refused)


def test_the_theme_given_a_string_for_its_state_is_a_400(app, caplog):
    client = app.server.test_client()
    theme = next(c for c in callbacks(client) if "shell-theme" in c["output"])
    with caplog.at_level(logging.INFO):
        response = post(client, json.dumps(body(theme, "not a theme")))
    assert response.status_code in (200, 204, 400), response.get_data(as_text=True)
    assert not [r for r in caplog.records if r.exc_info]


@pytest.mark.parametrize("depth", [100_000, 1_000, 101])
def test_inputs_nested_too_deep_are_refused_before_dash_reads_them(app, caplog, depth):
    client = app.server.test_client()
    callback = next(c for c in callbacks(client) if c["inputs"]
                    and not c["inputs"][0]["id"].startswith("{"))
    nested = "[" * depth + "]" * depth
    text = json.dumps(body(callback, "PLACEHOLDER")).replace('"PLACEHOLDER"', nested, 1)
    with caplog.at_level(logging.INFO):
        response = post(client, text)
        unclosed = post(client, text.replace("]" * depth, "", 1))
    assert response.status_code == 400 and "nested" in response.get_json()["error"]
    assert unclosed.status_code == 400
    assert not [r for r in caplog.records if r.exc_info]


def test_a_body_nested_within_the_limit_with_brackets_in_strings_is_read(app):
    """Brackets inside strings are text, not nesting: a CSV or a note may hold many."""
    client = app.server.test_client()
    callback = next(c for c in callbacks(client) if c["inputs"]
                    and not c["inputs"][0]["id"].startswith("{"))
    text = json.dumps(body(callback, ["[" * 5000 + '\\"{', [[["ok"]]]]))
    response = post(client, text)
    assert "nested" not in (response.get_json(silent=True) or {}).get("error", "")


@pytest.mark.slow
def test_a_real_server_answers_every_callback_posted_badly_without_a_traceback(tmp_path):
    """The same against ``hitboard serve`` (its front-door worker reads the bodies): no
    500, and its log holds no traceback."""
    port, log = free_port(), tmp_path / "serve.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HITBOARD_")}
    env.update(HITBOARD_STORE=str(tmp_path / "store"), HITBOARD_ROLLUP_INTERVAL="0",
               HITBOARD_ADMIN_TOKEN=ADMIN_TOKEN)
    with log.open("wb") as out:
        process = subprocess.Popen([str(Path(sys.executable).parent / "hitboard"), "serve",
                                    "--port", str(port)], env=env, stdout=out,
                                   stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(process, base)
        connection = http.client.HTTPConnection(f"127.0.0.1:{port}", timeout=30)
        connection.request("GET", "/_dash-dependencies")
        found = [c for c in json.loads(connection.getresponse().read())
                 if not c.get("clientside_function")]
        statuses = Counter()
        for callback in found:
            for value in ("x", {"a": [1]}, 7):
                statuses[_post_raw(connection, json.dumps(body(callback, value)))] += 1
        deep = json.dumps(body(found[0], "P")).replace('"P"', "[" * 100_000 + "]" * 100_000)
        assert _post_raw(connection, deep) == 400
        connection.close()
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(WAIT)
    assert 500 not in statuses and statuses[400] > 0, statuses
    text = log.read_text(errors="replace")
    assert "Traceback" not in text and text.count("callback refused") == statuses[400] + 1


def _post_raw(connection: http.client.HTTPConnection, data: str) -> int:
    connection.request("POST", CALLBACK, data.encode(), {
        "Content-Type": "application/json", "Authorization": f"Bearer {ADMIN_TOKEN}"})
    response = connection.getresponse()
    response.read()
    return response.status
