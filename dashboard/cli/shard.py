"""``shard-plan`` (which shard key, simulated on the store's data) and ``shard`` (apply one)."""

from __future__ import annotations

import click

from queries.sharding import cluster as sharding
from queries.sharding import plan as shardplan
from queries.sharding.text import plan_lines

from .common import open_db, store_option


@click.command("shard-plan")
@click.option("--shards", default=shardplan.DEFAULT_SHARDS, show_default=True,
              type=click.IntRange(min=1), help="Shards in the simulated cluster.")
@click.option("--chunk-mb", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Chunk size in MB (MongoDB's default: 128). Default: about "
              f"{shardplan.CHUNKS_PER_SHARD} chunks per shard of today's data, to show how "
              "it spreads once it is big enough to split.")
@store_option
def shard_plan(shards: int, chunk_mb: float | None, store: str | None) -> None:
    """Simulate chunking and balancing of the stats collections under each candidate
    shard key and recommend one."""
    db = open_db(store, read_only=True)
    try:
        docs = shardplan.read_workload(db)
    finally:
        db.client.close()
    chunk_bytes = int(chunk_mb * 2**20) if chunk_mb else None
    plan = shardplan.simulate(docs, shards, chunk_bytes)
    for line in plan_lines(plan):
        click.echo(line)


@click.command("shard")
@click.option("--key", "key_name", required=True, type=click.Choice(sharding.APPLICABLE),
              help="site-page: {metadata.site, metadata.page}; site-page-date: plus "
              "metadata.date; hashed-id: hashed _id.")
@click.option("--apply", "apply_", is_flag=True,
              help="Run the commands (needs a sharded cluster's mongos); without it they "
              "are only printed.")
@store_option
def shard(key_name: str, apply_: bool, store: str | None) -> None:
    """Shard stats.daily and stats.monthly on a key: enableSharding, shardCollection."""
    db = open_db(store, read_only=True)
    try:
        commands = sharding.shard_commands(db.name, key_name)
        if not apply_:
            kind = sharding.cluster_kind(db)
            click.echo(f"Would run on a mongos (this store is {kind}; add --apply there):")
            for command in commands:
                click.echo(sharding.render(command))
            return
        for command, reply in zip(commands, sharding.apply(db, key_name), strict=True):
            click.echo(f"{sharding.render(command)} -> ok {reply.get('ok')}")
    finally:
        db.client.close()


COMMANDS = (shard_plan, shard)
