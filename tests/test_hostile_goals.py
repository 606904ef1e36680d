"""A page goal against a stranger's page, on a real ``hitboard serve``: a pattern of
five ``**`` matched by a backtracking regex against a page of 2,046 ``/`` (its first 200
characters, as visits keep it) held the GIL for 23 s, and every thread of the server
(``/hit``'s and ``/healthz``'s) with it. Such a pattern is now refused; one an older store
holds (seven ``**`` here, against a page of 200 ``/`` ending ``/x``: hours with the old
matcher) is shown on History while ``/hit`` and ``/healthz`` are asked, and both answer
meanwhile (timings printed, not asserted; the probes' timeouts only bound the wait)."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from clikit import run
from dashkit import dashboard_app, free_port
from logkit import write_log
from test_faults_serve import WAIT, wait_until_serving

import queries
from dashboard.frontdoor import lanes
from queries.stats import sites
from queries.stats.goals import Goal

DAY = dt.datetime(2015, 5, 17, tzinfo=dt.UTC)
GOAL = "/**" * 6 + "/q/**/x"
STRANGE = "/" * 2046 + "a"          # the probe's page: visits keep its first 200 characters
SLASHES = "/" * 198 + "/x"          # 200: its head and tail are the goal's, the rest fails
PANELS = ["history-kpis.children", "history-panels.children", "history-filter.children",
          "history-botshare.children", "history-panel-notes.children",
          "history-panels-key.data"]
SEARCH = "?site=s&range=custom&start=2015-05-17&end=2015-05-18"
PROBE = 30.0            # a probe's bound: the old matcher kept them waiting for minutes


def panels_body() -> bytes:
    outputs = [dict(zip(("id", "property"), key.rsplit(".", 1), strict=True))
               for key in PANELS]
    return json.dumps({"output": ".." + "...".join(PANELS) + "..", "outputs": outputs,
                       "inputs": [{"id": "url", "property": "search", "value": SEARCH}],
                       "state": [{"id": "history-panels-key", "property": "data"}],
                       "changedPropIds": ["url.search"]}).encode()


def call(base: str, path: str, body: bytes | None = None,
         kind: str = "application/json") -> tuple[int, float, bytes]:
    """(status, seconds, body) of one request."""
    request = urllib.request.Request(base + path, data=body,
                                     headers={"Content-Type": kind} if body else {})
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=PROBE) as response:
            status, data = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, data = exc.code, exc.read()
    return status, time.perf_counter() - started, data


@pytest.fixture
def server(tmp_path):
    store = str(tmp_path / "store")
    log = write_log(tmp_path / "access.log", DAY,
                    [(1, 600, "/pricing"), (2, 610, STRANGE), (3, 620, SLASHES)])
    assert run(store, "ingest", str(log), "--site", "s").exit_code == 0
    assert run(store, "rollup").exit_code == 0
    refused = run(store, "goals", "add", "s", "--page", GOAL)
    assert refused.exit_code == 2
    assert refused.output.count("\n") == 1 and "at most 3 '**'" in refused.output
    db = queries.connect(store)
    try:
        sites.add_goal(db, "s", Goal("page", GOAL))        # as an older store holds it
    finally:
        db.client.close()
    port = free_port()
    env = {**os.environ, "HITBOARD_STORE": store, "HITBOARD_ROLLUP_INTERVAL": "0",
           "HITBOARD_BEACON_SITES": "s"}
    env.pop("HITBOARD_HOST", None)
    with (tmp_path / "serve.log").open("wb") as out:
        process = subprocess.Popen([str(Path(sys.executable).parent / "hitboard"), "serve",
                                    "--port", str(port)], env=env, stdout=out,
                                   stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(process, base)
        yield base
    finally:
        process.kill()
        process.wait(WAIT)


@pytest.mark.slow
def test_hit_and_healthz_answer_while_history_matches_a_goal_on_a_strangers_page(server):
    base = server
    shown: list = []
    history = threading.Thread(target=lambda: shown.append(
        call(base, "/_dash-update-component", panels_body())), daemon=True)
    history.start()
    time.sleep(0.2)                                 # the panels' read under way
    hits, health = [], []
    for i in range(10):
        hit = json.dumps({"site": "s", "page": f"/meanwhile/{i}"}).encode()
        hits.append(call(base, "/hit", hit, "text/plain;charset=UTF-8"))
        health.append(call(base, "/healthz"))
    history.join(PROBE)
    assert [status for status, _, _ in hits] == [204] * 10
    assert [status for status, _, _ in health] == [200] * 10
    assert set(json.loads(health[-1][2])["waiting"]) == {"quick", "pages"}
    assert shown and shown[0][0] == 200
    goals = json.dumps(json.loads(shown[0][2])["response"]["history-panels"])
    assert "Visit " + GOAL in goals, shown[0][2][:3000]
    print(f"\nHistory's panels {shown[0][1]:.2f} s; /hit at most "
          f"{max(s for _, s, _ in hits):.3f} s, /healthz at most "
          f"{max(s for _, s, _ in health):.3f} s")


def test_healthz_answers_503_while_a_request_of_hits_lane_waits_past_request_wait(tmp_path):
    now = [100.0]
    saved = dict(lanes.LANES)
    try:
        quick = lanes.register("quick", clock=lambda: now[0])
        lanes.register("pages", clock=lambda: now[0]).begin()
        with dashboard_app(tmp_path / "store", rollup_interval=0, request_wait=5) as app:
            client = app.server.test_client()
            token = quick.begin()
            now[0] += 4.0
            ok = client.get("/healthz")
            assert ok.status_code == 200
            assert ok.get_json()["waiting"] == {"pages": {"in_flight": 1, "oldest_s": 4.0},
                                                "quick": {"in_flight": 1, "oldest_s": 4.0}}
            now[0] += 3.5
            held = client.get("/healthz")
            assert held.status_code == 503
            assert "has waited 7.5 s (more than 5 s)" in held.get_json()["error"]
            quick.end(token)
            assert client.get("/healthz").status_code == 200
    finally:
        lanes.LANES.clear()
        lanes.LANES.update(saved)
