"""Shared fixtures: a fresh database on every backend present.

The embedded store always runs. A real MongoDB runs too when ``MONGODB_URI`` is set;
otherwise its cases are skipped with the reason shown by ``pytest -ra``.
"""

from __future__ import annotations

import os
import uuid

import pytest

import queries

BACKENDS = ["embedded", "mongodb"]


def _connect(backend: str, tmp_path):
    if backend == "embedded":
        return queries.connect(str(tmp_path / "store"))
    uri = os.environ.get("MONGODB_URI")
    if not uri:
        pytest.skip("MONGODB_URI is not set: no MongoDB server to test against")
    return queries.connect(uri, database=f"hitboard_test_{uuid.uuid4().hex[:8]}")


@pytest.fixture(params=BACKENDS)
def db(request, tmp_path):
    """A fresh database with the indexes created, dropped or closed after the test."""
    database = _connect(request.param, tmp_path)
    queries.ensure_indexes(database)
    yield database
    if request.param == "mongodb":
        database.client.drop_database(database.name)
    database.client.close()


@pytest.fixture
def embedded_db(tmp_path):
    """The embedded store only, for tests of its own guarantees."""
    database = queries.connect(str(tmp_path / "store"))
    queries.ensure_indexes(database)
    yield database
    database.client.close()
