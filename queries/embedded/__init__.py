"""An embedded, durable, pymongo-compatible store: no server to install."""

from .proxy import EmbeddedClient, EmbeddedDatabase
from .store import open_store


def connect_embedded(directory, database: str, read_only: bool = False) -> EmbeddedDatabase:
    return EmbeddedClient(open_store(directory, read_only=read_only))[database]


__all__ = ["EmbeddedClient", "EmbeddedDatabase", "connect_embedded"]
