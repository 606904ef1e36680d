"""Shared fixtures: a fresh database on every backend present.

The embedded store always runs. A real MongoDB runs too when ``MONGODB_URI`` is set;
otherwise its cases are skipped with the reason shown by ``pytest -ra``. "wire" is the
mongoeco wire-protocol server (tests/wire_server.py), reached through pymongo over TCP
like a real MongoDB; it skips with the reason where no Python >= 3.13 exists.
"""

from __future__ import annotations

import os
import uuid

import dash
import pytest
import time_machine
import wire_server
from clockkit import TEST_NOW
from hypothesis import settings

import queries

# Hypothesis's default 200 ms deadline per example is a timing assertion: a loaded
# machine fails it. Examples are bounded by their count, not by the clock.
settings.register_profile("hitboard", deadline=None)
settings.load_profile("hitboard")

BACKENDS = ["embedded", "mongodb", "wire"]


@pytest.fixture
def frozen_clock():
    """The clock set to ``TEST_NOW`` and running (timers still fire), for tests that
    seed hits "now" and read back "today" or "the last 7 days": the same days at any
    hour the suite runs, and any instant asked for. Yields the instant it starts from."""
    with time_machine.travel(TEST_NOW, tick=True):
        yield TEST_NOW


@pytest.fixture(scope="session")
def wire_uri(tmp_path_factory):
    """The URI of one wire-protocol server (in-memory engine) shared by the session (by
    each pytest-xdist worker: every worker starts its own), with the client timeouts of
    ``wire_server.PATIENT``: the server answers one command at a time, so a heartbeat
    waits behind a long command."""
    reason = wire_server.unavailable()
    if reason:
        pytest.skip(reason)
    server = wire_server.WireServer(None, tmp_path_factory.mktemp("wire") / "server.log")
    yield server.start().uri + "?" + wire_server.PATIENT
    server.stop()


def _connect(backend: str, tmp_path, request):
    if backend == "embedded":
        return queries.connect(str(tmp_path / "store"))
    if backend == "wire":
        uri = request.getfixturevalue("wire_uri")
        return queries.connect(uri, database=f"hitboard_test_{uuid.uuid4().hex[:8]}")
    uri = os.environ.get("MONGODB_URI")
    if not uri:
        pytest.skip("MONGODB_URI is not set: no MongoDB server to test against")
    return queries.connect(uri, database=f"hitboard_test_{uuid.uuid4().hex[:8]}")


@pytest.fixture(params=BACKENDS)
def db(request, tmp_path):
    """A fresh database with the indexes created, dropped or closed after the test. A
    test marked ``volume`` skips the wire-protocol emulator, which answers one command
    at a time in Python: its volumes take it minutes, and the same code runs on it in
    the smaller tests."""
    if request.param == "wire" and request.node.get_closest_marker("volume"):
        pytest.skip("volume test: on the embedded store and a real MongoDB only")
    database = _connect(request.param, tmp_path, request)
    queries.ensure_indexes(database)
    yield database
    if request.param in ("mongodb", "wire"):
        database.client.drop_database(database.name)
    database.client.close()


@pytest.fixture(scope="module", params=BACKENDS)
def module_db(request, tmp_path_factory):
    """``db`` for a module: a module fixture fills it once per backend for the tests
    that only read it (a sample ingested per test was most of their time)."""
    database = _connect(request.param, tmp_path_factory.mktemp("module-db"), request)
    queries.ensure_indexes(database)
    yield database
    if request.param in ("mongodb", "wire"):
        database.client.drop_database(database.name)
    database.client.close()


@pytest.fixture
def embedded_db(tmp_path):
    """The embedded store only, for tests of its own guarantees."""
    database = queries.connect(str(tmp_path / "store"))
    queries.ensure_indexes(database)
    yield database
    database.client.close()


@pytest.fixture(autouse=True)
def fresh_page_registry():
    """An empty ``dash.page_registry`` before and after every test, as Dash's own tests
    reset it (``clear_pages_state``): pages registered by one test's app never show in
    another's."""
    dash.page_registry.clear()
    yield
    dash.page_registry.clear()


@pytest.fixture
def app(tmp_path):
    """The dashboard on a fresh store inside a request context, so page callbacks can be
    called as plain functions (browser tests override it in tests/browser/conftest.py)."""
    from dashkit import dashboard_app

    with dashboard_app(tmp_path / "store") as app, app.server.test_request_context():
        yield app
