"""The ``hitboard`` command: one module per command, registered here."""

import click

from . import annotate, dimensions, ingest, loadgen, serve, shard, stats, store
from .common import HitboardGroup


@click.group(cls=HitboardGroup)
@click.version_option(package_name="hitboard")
def main() -> None:
    """hitboard: real-time web-traffic dashboard on MongoDB."""


for command in (*stats.COMMANDS, *loadgen.COMMANDS, *ingest.COMMANDS, *serve.COMMANDS,
                *shard.COMMANDS, *dimensions.COMMANDS, *store.COMMANDS, *annotate.COMMANDS):
    main.add_command(command)
