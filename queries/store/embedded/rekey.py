"""Convert the counter collections of a store written before keyed tables (``layouts``):
each table ``(rid, id, doc, k:...)`` of a collection that now has a layout is rewritten
as its keyed table, on the store's first writable open (``EmbeddedStore``) or by
``hitboard migrate``.

One write transaction per collection: a crash leaves it whole in the old layout, which
every read and write still understands, and the next open converts it again. A
collection holding a document the layout cannot key (an ``_id`` that is not its metadata
spelt out) keeps the old layout. The old table's dictionaries stay in ``hb_dicts``
under its old name (their ids are never given again); the new rows get their own.
"""

from __future__ import annotations

import fcntl
import sqlite3
from contextlib import suppress

import bson
from pymongo.errors import WriteError

from . import documents, layouts
from .catalog import Collection
from .planner import quote
from .reading import decode

BATCH = 10_000
OLD = " (before keyed rows)"


def pending(con: sqlite3.Connection) -> list[tuple[str, str, str]]:
    """(db, name, table) of each collection with a layout still in the old one."""
    found = []
    for db, name, table in con.execute("SELECT db, name, tbl FROM hb_collections"):
        if layouts.of(name) is None:
            continue
        names = [row[1] for row in con.execute(f"PRAGMA table_info({quote(table)})")]
        if "id" in names:
            found.append((db, name, table))
    return found


def convert(store) -> int:
    """Rekey every pending collection of ``store``; returns the documents rewritten.
    The old tables' pages are then given back to the file system (``VACUUM``: the long
    tail's store of 107 MB left 45 MB of them free), if no other process is busy."""
    done = _convert_all(store)
    if done:
        with store.write_lock, suppress(sqlite3.Error):
            fcntl.flock(store._queue, fcntl.LOCK_EX)
            try:
                store._writer.execute("VACUUM")
            finally:
                fcntl.flock(store._queue, fcntl.LOCK_UN)
    return done


def _convert_all(store) -> int:
    done = 0
    for db, name, table in pending(store.reader()):
        with store.writing() as con:
            if (db, name, table) not in pending(con):   # another process converted it
                continue
            con.execute("SAVEPOINT rekey")
            try:
                done += _convert(store, con, db, name, table)
            except WriteError:
                con.execute("ROLLBACK TO rekey")
                store.packer.rolled_back()   # a dictionary trained in it is gone too
            con.execute("RELEASE rekey")
    return done


def _convert(store, con, db: str, name: str, table: str) -> int:
    layout = layouts.of(name)
    old = table + OLD
    specs = [(index, bson.decode(spec)) for index, spec in con.execute(
        "SELECT name, spec FROM hb_indexes WHERE db = ? AND coll = ?", (db, name))]
    for index, _ in specs:
        con.execute(f"DROP INDEX IF EXISTS {quote(table + '/' + index)}")
    con.execute(f"ALTER TABLE {quote(table)} RENAME TO {quote(old)}")
    con.execute("UPDATE hb_dicts SET tbl = ? WHERE tbl = ?", (old, table))
    con.execute("DELETE FROM hb_indexes WHERE db = ? AND coll = ?", (db, name))
    con.execute(layouts.create_sql(table, name))
    info = Collection(db, name, table, list(layout.paths), packer=store.packer, layout=layout)
    count, last = 0, 0
    while rows := con.execute(f"SELECT rid, doc FROM {quote(old)} WHERE rid > ? "
                              f"ORDER BY rid LIMIT {BATCH}", (last,)).fetchall():
        docs = [decode(store.packer.unpack(con, doc)) for _, doc in rows]
        documents.insert(con, info, docs)
        count += len(docs)
        last = rows[-1][0]
    con.execute(f"DROP TABLE {quote(old)}")
    for index, spec in specs:
        store.create_index(db, name, index, [tuple(pair) for pair in spec["key"]],
                           unique=spec.get("unique", False),
                           ttl=spec.get("expireAfterSeconds"))
    return count
