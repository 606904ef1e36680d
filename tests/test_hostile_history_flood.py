"""A stranger asking a real ``hitboard serve`` for distinct minute-level History views,
2 at a time: each view's charts are new results for the shared cache,
which kept 2,000 of them whatever they weighed (the worker grew from 592 to 1,444 MB
after 400 views). The cache now holds at most ``cache_max_bytes`` (2 MiB here, so a
one-minute run passes it many times over): its accounted bytes stay under the bound and
the worker's memory stops growing once warm (figures printed)."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import pytest
from dashkit import free_port
from hostilekit import children, has_proc, request, rss_kib
from test_faults_serve import WAIT, wait_until_serving

import queries

DAY = dt.datetime(2015, 5, 17, tzinfo=dt.UTC)
PAGES = [f"/page-{i:02d}" for i in range(10)]
BOUND = 2 * 1024 ** 2
VIEWS = 160                 # the second half of them must not grow the worker (~50 s)
MARGIN_KIB = 16 * 1024      # the allocator's own noise between two measures, at most
RENDER = ("history-graph.figure", "history-totals.children", "history-period.children",
          "history-hint.children", "history-alert.children", "history-plotted.data",
          "history-notes.children", "history-compare-note.children", "history-drill.data")

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not has_proc(), reason="reads the worker's memory in /proc")]


def seed(store: Path) -> None:
    """Two days of per-minute hits on 10 pages: 12 hours of them by minute pickle to
    ~64 KB a chart, and their comparison as much."""
    db = queries.connect(str(store))
    queries.ensure_indexes(db)
    with queries.HitRecorder(db, flush_interval=3600, preallocate_next_day=False) as recorder:
        for minute in range(2 * 24 * 60):
            ts = DAY - dt.timedelta(days=1) + dt.timedelta(minutes=minute)
            for i, page in enumerate(PAGES):
                recorder.record("s", page, ts, n=1 + (minute + i) % 4)
    db.client.close()


def render_body(view: int) -> bytes:
    """History's render callback for 12 hours by minute from ``view`` minutes past
    ``DAY``, its 10 pages compared with the 12 hours before: a distinct URL each."""
    start = DAY + dt.timedelta(minutes=view)
    search = (f"?site=s&{'&'.join(f'page={p}' for p in PAGES)}&range=custom"
              f"&start={start:%Y-%m-%dT%H:%M}&end={start + dt.timedelta(hours=12):%Y-%m-%dT%H:%M}"
              "&gran=minute&compare=1")
    outputs = [dict(zip(("id", "property"), key.split("."), strict=True)) for key in RENDER]
    return json.dumps({"output": ".." + "...".join(RENDER) + "..", "outputs": outputs,
                       "inputs": [{"id": "url", "property": "search", "value": search}],
                       "changedPropIds": ["url.search"], "state": []}).encode()


def render(port: int, view: int) -> int | None:
    body = render_body(view)
    status, _ = request(port, b"POST /_dash-update-component HTTP/1.1\r\nHost: flood\r\n"
                        b"Content-Type: application/json\r\nConnection: close\r\n"
                        b"Content-Length: %d\r\n\r\n%s" % (len(body), body), WAIT)
    return status


def flood(port: int, views: range) -> list[int | None]:
    """Render ``views``, 2 at a time; their statuses."""
    pending, lock, statuses = iter(views), threading.Lock(), []

    def client() -> None:
        while True:
            with lock:
                view = next(pending, None)
            if view is None:
                return
            status = render(port, view)
            with lock:
                statuses.append(status)

    threads = [threading.Thread(target=client) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return statuses


def cache_of(base: str) -> dict:
    with urllib.request.urlopen(base + "/healthz", timeout=WAIT) as response:
        return json.loads(response.read())["cache"]


@pytest.fixture
def server(tmp_path):
    store, port = tmp_path / "store", free_port()
    seed(store)
    env = {**os.environ, "HITBOARD_STORE": str(store), "HITBOARD_ROLLUP_INTERVAL": "0",
           "HITBOARD_CACHE_MAX_BYTES": str(BOUND)}
    env.pop("HITBOARD_HOST", None)
    log = (tmp_path / "serve.log").open("wb")
    process = subprocess.Popen([str(Path(sys.executable).parent / "hitboard"), "serve",
                                "--port", str(port)], env=env, stdout=log,
                               stderr=subprocess.STDOUT)
    try:
        wait_until_serving(process, f"http://127.0.0.1:{port}")
        yield port, process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(WAIT)


def test_distinct_minute_views_stay_within_the_cache_bound(server):
    port, process = server
    base = f"http://127.0.0.1:{port}"
    worker = (children(process.pid) or [process.pid])[0]
    started = rss_kib(worker)
    half = VIEWS // 2
    assert flood(port, range(half)) == [200] * half
    warm, cache_warm = rss_kib(worker), cache_of(base)
    assert flood(port, range(half, VIEWS)) == [200] * half
    after, cache_after = rss_kib(worker), cache_of(base)
    print(f"\nworker RSS: {started // 1024} MiB at start, {warm // 1024} MiB after {half} "
          f"distinct minute views, {after // 1024} MiB after {VIEWS} (at most "
          f"+{MARGIN_KIB // 1024} MiB allowed); cache {cache_warm.get('bytes')} then "
          f"{cache_after.get('bytes')} bytes in {cache_warm.get('entries')} then "
          f"{cache_after.get('entries')} entries (bound {BOUND:,})")
    assert cache_after.get("max_bytes") == BOUND, "the bound is cache_max_bytes"
    for cache in (cache_warm, cache_after):
        assert 0 < cache.get("bytes", BOUND + 1) <= BOUND
    assert cache_after["misses"] >= 2 * VIEWS        # a chart and its comparison a view
    assert after <= warm + MARGIN_KIB
