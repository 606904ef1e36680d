"""The embedded store: a document database on SQLite, with pymongo's API."""

from __future__ import annotations

import os

from . import migrate
from .proxy import EmbeddedClient, EmbeddedDatabase
from .store import open_store


def connect_embedded(directory, database: str, read_only: bool = False) -> EmbeddedDatabase:
    """The database ``database`` of the store in ``directory`` (converted first if it is
    in the first embedded format)."""
    if migrate.needed(directory):
        convert(directory)
    return EmbeddedClient(open_store(directory, read_only=read_only))[database]


def convert(directory: str | os.PathLike) -> int:
    """Convert a store of the first embedded format; returns the records replayed (0:
    nothing to convert). The old files are kept in ``DIR/format-0/``."""
    if not migrate.needed(directory):
        return 0
    client = EmbeddedClient(open_store(directory))
    try:
        return migrate.convert(client)
    finally:
        client.close()


__all__ = ["EmbeddedClient", "EmbeddedDatabase", "connect_embedded", "convert"]
