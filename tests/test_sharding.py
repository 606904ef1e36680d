"""The sharding commands: what they are for each key, and where they may run."""

from __future__ import annotations

import pytest

from queries import HitboardError
from queries.sharding import cluster as sharding


def test_site_page_commands():
    assert sharding.shard_commands("hitboard", "site-page") == [
        {"enableSharding": "hitboard"},
        {"shardCollection": "hitboard.stats.daily",
         "key": {"metadata.site": 1, "metadata.page": 1}},
        {"shardCollection": "hitboard.stats.monthly",
         "key": {"metadata.site": 1, "metadata.page": 1}},
    ]


def test_site_page_date_key_is_a_prefix_of_the_stats_index():
    from queries.stats.schema import STATS_INDEX

    command = sharding.shard_commands("db", "site-page-date")[1]
    assert list(command["key"].items()) == STATS_INDEX


def test_hashed_id_creates_its_index_first():
    commands = sharding.shard_commands("hb", "hashed-id")
    assert [next(iter(c)) for c in commands] == [
        "enableSharding", "createIndexes", "shardCollection", "createIndexes", "shardCollection"]
    assert commands[1] == {"createIndexes": "stats.daily", "$db": "hb",
                           "indexes": [{"key": {"_id": "hashed"}, "name": "_id_hashed"}]}
    assert commands[2]["key"] == {"_id": "hashed"}


def test_time_key_and_unknown_keys_are_refused():
    for key in ("date", "nope"):
        with pytest.raises(HitboardError, match="unknown shard key"):
            sharding.shard_commands("hitboard", key)


def test_render_is_mongosh_syntax():
    text = sharding.render({"createIndexes": "stats.daily", "$db": "hb", "indexes": []})
    assert text == 'db.getSiblingDB("hb").runCommand({"createIndexes": "stats.daily", ' \
                   '"indexes": []})'
    assert sharding.render({"enableSharding": "hb"}).startswith('db.getSiblingDB("admin")')


def test_apply_refuses_a_store_that_is_not_a_router(db):
    assert sharding.cluster_kind(db) in ("embedded", "mongod")
    with pytest.raises(sharding.NotAClusterError, match="cannot shard on"):
        sharding.apply(db, "site-page")


class _Router:
    """A mongos as pymongo shows it: hello says isdbgrid; commands are recorded."""

    def __init__(self):
        self.ran = []
        self.admin = _RouterDb(self, "admin")

    def __getitem__(self, name):
        return _RouterDb(self, name)


class _RouterDb:
    def __init__(self, client, name):
        self.client, self.name = client, name

    def command(self, body):
        if body == "hello":
            return {"msg": "isdbgrid", "ok": 1.0}
        self.client.ran.append((self.name, body))
        return {"ok": 1.0}


def test_apply_runs_every_command_on_a_router():
    router = _Router()
    db = _RouterDb(router, "hitboard")
    assert sharding.cluster_kind(db) == "mongos"
    replies = sharding.apply(db, "hashed-id")
    assert len(replies) == 5
    assert router.ran[0] == ("admin", {"enableSharding": "hitboard"})
    assert router.ran[1][0] == "hitboard" and "createIndexes" in router.ran[1][1]
