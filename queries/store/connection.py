"""Where the data lives: a MongoDB server or the embedded store, chosen by one string."""

from __future__ import annotations

import os
import re
from contextlib import nullcontext

from pymongo import MongoClient
from pymongo.uri_parser import parse_uri

from .embedded import connect_embedded, convert

DEFAULT_DATABASE = "hitboard"
MONGODB_SCHEMES = ("mongodb://", "mongodb+srv://")


def is_server(store: str) -> bool:
    return store.startswith(MONGODB_SCHEMES)


def connect(store: str | os.PathLike, database: str | None = None, read_only: bool = False):
    """A pymongo ``Database``: on a MongoDB server for ``mongodb://`` and
    ``mongodb+srv://`` URIs, otherwise on the embedded store in that directory (which
    ``dashboard.settings`` resolves: this module reads no environment).

    ``read_only`` lets a second process read an embedded store that a running server
    holds (it sees the data as of opening); it has no effect on a MongoDB server.
    Close with ``db.client.close()``.
    """
    target = str(store)
    if is_server(target):
        name = database or parse_uri(target).get("database") or DEFAULT_DATABASE
        return MongoClient(target, tz_aware=True, appname="hitboard")[name]
    return connect_embedded(target, database or DEFAULT_DATABASE, read_only=read_only)


def migrate_store(directory: str | os.PathLike) -> int:
    """Convert an embedded store of the first format (snapshot + journal) to the current
    one; returns the records replayed, 0 when there is nothing to convert. ``connect``
    does the same on first open; this is for doing it on purpose."""
    return convert(directory)


def is_embedded(db) -> bool:
    return not isinstance(db.client, MongoClient)


def atomic(db):
    """A context in which the embedded store commits every write at once (one SQLite
    transaction, one turn of its write lock); on MongoDB writes stay one by one. For
    writes that are safe either way, as the ingest's guarded flushes are: all at once is
    only fewer waits for the lock that other processes' writes hold in turn."""
    return nullcontext() if not is_embedded(db) else db.client.store.writing()


def bulk_loading(db) -> None:
    """Tune this process's embedded-store writer for a bulk load (``hitboard ingest``, its
    worker processes); nothing to tune on MongoDB."""
    if is_embedded(db):
        db.client.store.bulk_loading()


def redact(store: str) -> str:
    """The store string with any password hidden, fit for logs and pages."""
    return re.sub(r"(mongodb(?:\+srv)?://[^:/@]+):[^@]*@", r"\1:***@", store)
