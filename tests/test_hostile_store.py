"""Stores hitboard must not take, or must take read-only: a
``hitboard.sqlite3`` that is not SQLite, another program's database in its place, a store
on a read-only file system. Each is one ``Error:`` line and exit 2, never a traceback; a
file refused is left byte for byte; ``serve --readonly`` serves a read-only store."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest
from dashkit import free_port
from test_faults_serve import WAIT, wait_until_serving

import queries
from queries.stats.sites import register
from queries.store.embedded.catalog import MARKER
from queries.store.embedded.store import FILENAME

HIT_TIME = dt.datetime(2026, 3, 12, 12, 0, tzinfo=dt.UTC)
HITBOARD = str(Path(sys.executable).parent / "hitboard")


def hitboard(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HITBOARD_")}
    return subprocess.run([HITBOARD, *args], capture_output=True, text=True, env=env,
                          timeout=timeout)


def one_error_line(result: subprocess.CompletedProcess, *words: str) -> str:
    """The run exited 2 with one ``Error:`` line naming ``words``, and no traceback."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.stderr
    assert all(word in errors[0] for word in words), errors[0]
    return errors[0]


def tables(path: Path) -> set[str]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {name for (name,) in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        con.close()


def snapshot(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in directory.iterdir()}


def test_a_file_that_is_not_sqlite_is_refused_and_left_as_it_is(tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    (store / FILENAME).write_bytes(b"notes of another program, not a database\n" * 100)
    before = snapshot(store)
    top = ["top", "--site", "blog", "--start", "2026-03-01", "--end", "2026-03-02"]
    for command in (["site", "list"], ["site", "add", "blog"], top):
        one_error_line(hitboard(*command, "--store", str(store)), "not a SQLite database")
    assert snapshot(store) == before


def test_another_programs_database_is_refused_never_written(tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    con = sqlite3.connect(store / FILENAME)
    con.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total)")
    con.execute("INSERT INTO invoices VALUES (1, 99.5)")
    con.commit()
    con.close()
    before = snapshot(store)
    for command in (["site", "list"], ["site", "add", "blog"]):
        one_error_line(hitboard(*command, "--store", str(store)),
                       "another program's SQLite database", "invoices")
    serve = hitboard("serve", "--store", str(store), "--port", str(free_port()), timeout=WAIT)
    one_error_line(serve, "another program's SQLite database")
    assert snapshot(store) == before
    assert tables(store / FILENAME) == {"invoices"}


def test_a_new_store_holds_the_marker(tmp_path):
    db = queries.connect(tmp_path / "store")
    db.client.close()
    assert MARKER in tables(tmp_path / "store" / FILENAME)


def test_a_store_of_the_layout_before_the_marker_is_recognised_and_marked(tmp_path):
    """A store made before the marker has the catalog: read-only it is read as it is,
    the first writable open gives it the marker, and its data stays."""
    store = tmp_path / "store"
    db = queries.connect(store)
    register(db, "blog", "admin")
    with queries.HitRecorder(db) as recorder:
        recorder.record("blog", "/a", HIT_TIME)
    db.client.close()
    con = sqlite3.connect(store / FILENAME)
    con.execute(f"DROP TABLE {MARKER}")
    con.commit()
    con.close()
    assert MARKER not in tables(store / FILENAME)
    read = hitboard("site", "list", "--store", str(store))
    assert read.returncode == 0 and "blog" in read.stdout, read.stderr
    assert MARKER not in tables(store / FILENAME)                 # read-only: not written
    add = hitboard("site", "add", "shop", "--store", str(store))
    assert add.returncode == 0, add.stderr
    assert MARKER in tables(store / FILENAME)
    listed = hitboard("site", "list", "--store", str(store)).stdout
    assert "blog" in listed and "shop" in listed


@contextmanager
def read_only_mount(tmp_path: Path):
    """A tmpfs at ``tmp_path/ro`` holding a store with a site and a hit, remounted
    read-only (root only): a read-only directory is no such thing to root."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("a read-only file system is mounted by root only (as root, a "
                    "directory without write bits is still written)")
    mnt = tmp_path / "ro"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mnt)]).returncode:
        pytest.skip("this machine does not let the test mount a tmpfs")
    try:
        store = mnt / "store"
        assert hitboard("site", "add", "blog", "--store", str(store)).returncode == 0
        db = queries.connect(store)
        with queries.HitRecorder(db) as recorder:
            recorder.record("blog", "/a", HIT_TIME)
        db.client.close()
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        yield store
    finally:
        subprocess.run(["umount", "-l", str(mnt)])


@pytest.mark.slow
def test_a_store_on_a_read_only_file_system(tmp_path):
    """Read commands and ``serve --readonly`` read it; writing is one error line."""
    with read_only_mount(tmp_path) as store:
        listed = hitboard("site", "list", "--store", str(store))
        assert listed.returncode == 0 and "blog" in listed.stdout, listed.stderr
        one_error_line(hitboard("site", "list", "--store", str(store.parent)),
                       "no hitboard store", "read-only file system")
        one_error_line(hitboard("site", "add", "shop", "--store", str(store)),
                       "cannot be written", "read-only file system", "--readonly")
        serve = hitboard("serve", "--store", str(store), "--port", str(free_port()),
                         timeout=WAIT)
        one_error_line(serve, "cannot be written")
        with serving_read_only(store) as base:
            with urllib.request.urlopen(base + "/healthz", timeout=5) as response:
                health = json.loads(response.read())
            assert health["status"] == "ok" and health["readonly"] is True
            with urllib.request.urlopen(base + "/", timeout=5) as response:
                assert response.status == 200


@contextmanager
def serving_read_only(store: Path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HITBOARD_")}
    process = subprocess.Popen([HITBOARD, "serve", "--readonly", "--store", str(store),
                                "--port", str(port), "--no-demo"], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(process, base)
        yield base
    finally:
        process.terminate()
        _, err = process.communicate(timeout=WAIT)
        assert b"Traceback" not in err, err.decode()
