"""Sharding the stats collections: the admin commands for a key, and running them.

Only a router (``mongos``, which answers ``hello`` with ``msg: "isdbgrid"``) can shard a
collection. Anywhere else the commands are shown, not run, so an operator can paste them
into mongosh on the cluster.
"""

from __future__ import annotations

import json

from pymongo.errors import PyMongoError

from ..errors import HitboardError
from ..stats import schema
from .plan import CANDIDATES

# Keys an operator may apply: time alone is simulated only, never offered (every write
# of a day would go to the one shard holding the newest chunk).
APPLICABLE = ("site-page", "site-page-date", "hashed-id")
SHARDED_COLLECTIONS = (schema.DAILY, schema.MONTHLY)


class NotAClusterError(HitboardError):
    """The store is not a sharded cluster's router."""


def shard_commands(database: str, key_name: str) -> list[dict]:
    """The admin commands, in order, that shard both stats collections on ``key_name``."""
    if key_name not in APPLICABLE:
        raise HitboardError(f"unknown shard key {key_name!r}: use one of "
                            f"{', '.join(APPLICABLE)}")
    key = CANDIDATES[key_name].key
    commands: list[dict] = [{"enableSharding": database}]
    for collection in SHARDED_COLLECTIONS:
        if key_name == "hashed-id":
            # A non-empty collection needs its hashed index before shardCollection.
            commands.append({"createIndexes": collection, "$db": database,
                             "indexes": [{"key": dict(key), "name": "_id_hashed"}]})
        commands.append({"shardCollection": f"{database}.{collection}", "key": dict(key)})
    return commands


def render(command: dict) -> str:
    """One command as mongosh takes it: ``db.getSiblingDB(...).runCommand({...})``."""
    body = {k: v for k, v in command.items() if k != "$db"}
    target = command.get("$db", "admin")
    return f"db.getSiblingDB({json.dumps(target)}).runCommand({json.dumps(body)})"


def cluster_kind(db) -> str:
    """``embedded``, ``mongos`` (a sharded cluster's router) or ``mongod``."""
    reply = db.client.admin.command("hello")
    if reply.get("embedded"):
        return "embedded"
    return "mongos" if reply.get("msg") == "isdbgrid" else "mongod"


def apply(db, key_name: str) -> list[dict]:
    """Run the commands on a router; returns the replies. Anywhere else: NotAClusterError."""
    commands = shard_commands(db.name, key_name)
    kind = cluster_kind(db)
    if kind != "mongos":
        where = ("the embedded store" if kind == "embedded"
                 else "a MongoDB server that is not a sharded cluster's mongos")
        raise NotAClusterError(f"cannot shard on {where}: connect --store to a mongos "
                               "(mongodb://router:27017) or run the commands shown without "
                               "--apply on the cluster")
    replies = []
    for command in commands:
        target = db.client[command.get("$db", "admin")]
        body = {k: v for k, v in command.items() if k != "$db"}
        try:
            replies.append(target.command(body))
        except PyMongoError as exc:
            raise HitboardError(f"{next(iter(body))} failed: {exc}") from exc
    return replies
