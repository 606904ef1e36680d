"""A full disk: ``hitboard ingest`` stops with one line and exit code 4, nothing counted
twice when run again once there is room; the server holds hits in memory up to its
bound, answers 503 past it, and counts everything acknowledged once space returns.

Twice: a real full file system (a small tmpfs mounted by the test: root only, as CI
runs), and SQLite's own limit (``PRAGMA max_page_count``, which raises SQLITE_FULL)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from dashkit import counted, dashboard_app, full_disk, held, register_sites

import queries
from queries.stats import schema

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "apache_combined_2015.log"
HITBOARD = str(Path(sys.executable).with_name("hitboard"))
# ``hitboard ingest`` with every writer connection of the embedded store limited to
# ``argv[1]`` pages (SQLITE_FULL past them), then the command's own arguments.
LIMITED = """
import sys
from queries.store.embedded import store
pages = int(sys.argv[1])
connect = store.EmbeddedStore._connect
def limited(self, cache_kb):
    con = connect(self, cache_kb)
    if cache_kb == store.WRITER_CACHE_KB:
        con.execute(f"PRAGMA max_page_count={pages}")
    return con
store.EmbeddedStore._connect = limited
from dashboard.cli import main
main(sys.argv[2:], prog_name="hitboard")
"""


def _log(tmp_path) -> Path:
    if SHARED.exists():
        return Path(shutil.copy(SHARED, tmp_path / "access.log"))
    # More than a 2 MiB file system holds once ingested (its pages, hours and events).
    lines = [f'10.0.{i // 250 % 250}.{i % 250} - - [17/May/2015:{10 + i // 3600:02d}:'
             f'{i // 60 % 60:02d}:{i % 60:02d} +0000] "GET /p{i % 3000} HTTP/1.1" 200 {i} '
             f'"-" "agent/{i % 7}"' for i in range(30_000)]
    path = tmp_path / "access.log"
    path.write_text("\n".join(lines) + "\n")
    return path


def _hits(store: str) -> int:
    db = queries.connect(store, read_only=True)
    try:
        return sum(doc["daily"] for doc in db[schema.DAILY].find({"metadata.page": "*"}))
    finally:
        db.client.close()


def _ingest(*args, limit: int | None = None) -> subprocess.CompletedProcess:
    command = ([sys.executable, "-c", LIMITED, str(limit)] if limit else [HITBOARD])
    return subprocess.run([*command, "ingest", *args], capture_output=True, text=True,
                          timeout=180, env={k: v for k, v in os.environ.items()
                                            if not k.startswith("HITBOARD_")})


def _check_full_then_whole(first, again, store: str, lines: int) -> None:
    assert first.returncode == 4, first.stderr
    errors = [line for line in first.stderr.splitlines() if line.startswith("Error")]
    assert len(errors) == 1 and "disk is full" in errors[0], first.stderr
    assert "Traceback" not in first.stderr
    assert again.returncode == 0, again.stderr
    assert _hits(store) == lines                   # each line once, over both runs


def test_ingest_on_sqlites_full_limit_exits_4_and_a_rerun_counts_once(tmp_path):
    log = _log(tmp_path)
    lines = sum(1 for _ in log.open())
    store = str(tmp_path / "store")
    first = _ingest(str(log), "--site", "s", "--jobs", "1", "--store", store, limit=60)
    again = _ingest(str(log), "--site", "s", "--jobs", "1", "--store", store)
    _check_full_then_whole(first, again, store, lines)


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("mount"),
                    reason="mounting a small tmpfs needs root")
def test_ingest_on_a_full_file_system_exits_4_and_a_rerun_counts_once(tmp_path):
    log = _log(tmp_path)
    lines = sum(1 for _ in log.open())
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)]).returncode:
        pytest.skip("this machine does not let the test mount a tmpfs")
    try:
        store = str(mnt / "store")
        first = _ingest(str(log), "--site", "s", "--jobs", "1", "--store", store)
        subprocess.run(["mount", "-o", "remount,size=128m", str(mnt)], check=True)
        again = _ingest(str(log), "--site", "s", "--jobs", "1", "--store", store)
        _check_full_then_whole(first, again, store, lines)
    finally:
        subprocess.run(["umount", "-l", str(mnt)])


def test_the_server_holds_hits_while_the_disk_is_full_then_counts_them(tmp_path):
    """Hits answered while the store cannot be written are in the journal: each 204 is
    counted once there is room again, and ``/healthz`` says meanwhile that they wait."""
    with dashboard_app(tmp_path / "store", rollup_interval=0, flush_interval=0.05) as app:
        register_sites(app, "blog")
        client = app.server.test_client()
        with full_disk(app):
            held(client, [client.post("/hit", data=json.dumps({"site": "blog",
                                                                "page": f"/p{i}"}),
                                      content_type="text/plain") for i in range(60)])
        assert counted(app).journal.status().hits_written == 60
        health = client.get("/healthz")
        assert health.status_code == 200 and health.get_json()["quarantined"] == 0
        for _ in range(100):                        # and it goes on counting
            assert client.post("/hit", data=json.dumps({"site": "blog", "page": "/after"}),
                               content_type="text/plain").status_code == 204
