"""The wire-protocol server of the test tier: pymongo over TCP, data kept across a kill."""

from __future__ import annotations

import pytest
import wire_server
from pymongo import MongoClient

import queries


@pytest.fixture
def server(tmp_path):
    reason = wire_server.unavailable()
    if reason:
        pytest.skip(reason)
    server = wire_server.WireServer(tmp_path / "data", tmp_path / "server.log").start()
    yield server
    server.stop()


def test_wire_backend_is_a_mongodb_client_over_tcp(wire_uri):
    db = queries.connect(wire_uri, database="probe")
    try:
        assert isinstance(db.client, MongoClient)
        assert not queries.is_embedded(db)
        assert db.command("ping")["ok"] == 1
    finally:
        db.client.close()


def test_acknowledged_writes_survive_a_kill_and_restart_on_the_same_port(server):
    db = queries.connect(server.uri, database="durable")
    db.things.insert_one({"_id": "a", "n": 1})
    db.things.update_one({"_id": "a"}, {"$inc": {"n": 41}})
    port = server.port
    server.kill()
    server.start()
    assert server.port == port
    assert db.things.find_one({"_id": "a"}) == {"_id": "a", "n": 42}
    db.client.close()
