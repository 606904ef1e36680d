"""A real ``hitboard serve`` attacked through its /hit beacon: poisoned bodies (lone
surrogates, control characters C0 and C1, bidirectional overrides) are refused with 400
and stop nothing, a flood of made-up sites and pages grows nothing past its bounds, and
the 200 good hits sent afterwards are all counted."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from dashkit import free_port
from test_faults_serve import WAIT, wait_until_serving

import queries
from queries.stats import schema

POISON = ['{"site": "blog", "page": "/\\ud800"}',
          '{"site": "blog", "page": "/?utm_source=\\udfff"}',
          '{"site": "blog", "page": "/", "referrer": "https://x/\\ud800"}',
          '{"site": "blog", "page": "/a\\u0001b"}',
          '{"site": "\\ud800", "page": "/"}',
          '{"site": "blog", "page": "/c1\u009b31mRED"}',     # raw characters, not JSON escapes
          '{"site": "blog", "page": "/", "referrer": "https://x/\u0085"}',
          '{"site": "blog", "page": "/\u202etxt.exe"}']


def send(base: str, body: str) -> int:
    request = urllib.request.Request(base + "/hit", data=body.encode(),
                                     headers={"Content-Type": "text/plain;charset=UTF-8"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.fixture
def server(tmp_path):
    with serving(tmp_path, HITBOARD_BEACON_PAGES_PER_DAY="50") as served:
        yield served


@contextmanager
def serving(tmp_path, **variables):
    store, port = tmp_path / "store", free_port()
    env = {**os.environ, "HITBOARD_STORE": str(store), "HITBOARD_ROLLUP_INTERVAL": "0",
           "HITBOARD_BEACON_SITES": "blog", **variables}
    env.pop("HITBOARD_HOST", None)
    log = (tmp_path / "serve.log").open("wb")
    process = subprocess.Popen([str(Path(sys.executable).parent / "hitboard"), "serve",
                                "--port", str(port)], env=env, stdout=log,
                               stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(process, base)
        yield base, process, store
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(WAIT)


def stopped(process) -> None:
    process.send_signal(signal.SIGTERM)
    assert process.wait(WAIT) == 0


@pytest.mark.slow
def test_poison_then_200_good_hits_all_counted(server):
    base, process, store = server
    for body in POISON:
        assert send(base, body) == 400, body
    for i in range(200):
        assert send(base, json.dumps({"site": "blog", "page": f"/p{i % 20}"})) == 204
    with urllib.request.urlopen(base + "/healthz", timeout=30) as response:
        assert json.loads(response.read())["status"] == "ok"
    stopped(process)
    db = queries.connect(str(store), read_only=True)
    try:
        total = db[schema.DAILY].find({"metadata.site": "blog", "metadata.page": "*"})
        assert sum(doc["daily"] for doc in total) == 200
    finally:
        db.client.close()


@pytest.mark.slow
def test_a_flood_of_sites_and_pages_is_bounded_then_200_good_hits_counted(server):
    base, process, store = server
    assert send(base, json.dumps({"site": "blog", "page": "/good"})) == 204
    for i in range(300):
        assert send(base, json.dumps({"site": f"flood{i}", "page": "/"})) == 403
    for i in range(300):
        assert send(base, json.dumps({"site": "blog", "page": f"/flood/{i}"})) == 204
    for _ in range(200):
        assert send(base, json.dumps({"site": "blog", "page": "/good"})) == 204
    stopped(process)
    db = queries.connect(str(store), read_only=True)
    try:
        assert queries.list_sites(db) == ["blog"]
        pages = queries.list_pages(db, "blog")
        assert len(pages) <= 51 + 1 and "/(other)" in pages       # the cap, "/(other)"
        whole = db[schema.DAILY].find({"metadata.site": "blog", "metadata.page": "*"})
        assert sum(doc["daily"] for doc in whole) == 501
        good = db[schema.DAILY].find({"metadata.site": "blog", "metadata.page": "/good"})
        assert sum(doc["daily"] for doc in good) == 201           # a page of the day before
    finally:
        db.client.close()


@pytest.mark.slow
def test_a_real_page_is_named_after_a_flood_of_pages_sent_once(tmp_path):
    """At a tenth of the probe's scale: 2,000 made-up pages (twice the
    1,000 that wait), then 200 hits on a new real page: it has its name from its second."""
    with serving(tmp_path, HITBOARD_BEACON_PAGES_PER_DAY="1000",
                 HITBOARD_BEACON_UNSEEN_PAGES="10") as (base, process, store):
        with keep_alive(base) as post:
            for i in range(2_000):
                assert post({"site": "blog", "page": f"/flood/{i}"}) == 204
            for _ in range(200):
                assert post({"site": "blog", "page": "/good200b"}) == 204
        stopped(process)
    db = queries.connect(str(store), read_only=True)
    try:
        daily = Counter()
        for doc in db[schema.DAILY].find({"metadata.site": "blog"}):
            daily[doc["metadata"]["page"]] += doc["daily"]
        assert daily["*"] == 2_200 and daily["/good200b"] == 199
        assert len(daily) == 1 + 10 + 1 + 1             # "*", the unseen share, /(other)
    finally:
        db.client.close()


@contextmanager
def keep_alive(base: str):
    """A function posting a hit on one kept-alive connection; its status."""
    connection = http.client.HTTPConnection(urlsplit(base).netloc, timeout=5)

    def post(hit: dict) -> int:
        connection.request("POST", "/hit", json.dumps(hit),
                           {"Content-Type": "text/plain;charset=UTF-8"})
        response = connection.getresponse()
        response.read()
        return response.status

    try:
        yield post
    finally:
        connection.close()
