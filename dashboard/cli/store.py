"""``hitboard migrate``: convert an embedded store of the first format on purpose."""

from __future__ import annotations

from pathlib import Path

import click

import queries
from queries.store.embedded.migrate import ARCHIVE


@click.command()
@click.argument("directory", type=click.Path(file_okay=False, exists=True))
def migrate(directory: str) -> None:
    """Convert the embedded store in DIRECTORY from the first format (snapshot.bson and
    journal files) to SQLite. Opening an old store converts it too; the old files are
    kept in DIRECTORY/format-0/ until you remove them."""
    records = queries.migrate_store(directory)
    if not records:
        click.echo(f"{directory}: nothing to convert (already in the current format)")
        return
    click.echo(f"{directory}: converted {records:,} records; the old files are in "
               f"{Path(directory) / ARCHIVE}")


COMMANDS = (migrate,)
