"""What the embedded store knows of its collections, kept in the database itself: a
collection's table (``hb_collections``), its indexes (``hb_indexes``), the key columns
the indexes gave its table, and the zstd dictionaries (``hb_dicts``, ``packing.py``).
The marker table ``hitboard_store`` says the database is a hitboard store (``opening``).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

import bson

from . import layouts
from .layouts import KeyedLayout
from .packing import Packer
from .planner import KeyedColumns, column_name, quote

FORMAT = 1
MARKER = "hitboard_store"


@dataclass
class Collection:
    """A collection's table, its key columns (field paths) and its indexes."""

    db: str
    name: str
    table: str
    columns: list[str] = field(default_factory=list)
    indexes: dict[str, dict] = field(default_factory=dict)
    packer: Packer = field(default_factory=Packer, repr=False)
    layout: KeyedLayout | None = None   # a keyed table (``layouts``), else rid + id

    @property
    def column_set(self) -> set[str]:
        if self.layout is not None:
            return KeyedColumns(self.columns, self.layout)
        return set(self.columns)

    # A row's address: its rid, or its key (the primary key of a keyed table).
    @property
    def address(self) -> str:
        if self.layout is None:
            return "rid"
        return ", ".join(quote(column_name(p)) for p in self.layout.paths)

    @property
    def width(self) -> int:
        return 1 if self.layout is None else len(self.layout.paths)

    @property
    def at_address(self) -> str:
        """The SQL condition of one row by its address (``address_params``)."""
        if self.layout is None:
            return "rid = ?"
        return f"({self.address}) = ({', '.join('?' * self.width)})"

    def address_of(self, row) -> object:
        return row[0] if self.layout is None else tuple(row[:self.width])

    def address_params(self, address) -> list:
        return [address] if self.layout is None else list(address)


def create(con: sqlite3.Connection) -> None:
    """The bookkeeping tables and the marker, if missing (also in read-only mode: a new
    store is empty, not broken)."""
    con.execute("BEGIN IMMEDIATE")
    con.execute("CREATE TABLE IF NOT EXISTS hb_meta (key TEXT PRIMARY KEY, value)")
    con.execute("CREATE TABLE IF NOT EXISTS hb_collections (db TEXT NOT NULL, "
                "name TEXT NOT NULL, tbl TEXT NOT NULL UNIQUE, PRIMARY KEY (db, name))")
    con.execute("CREATE TABLE IF NOT EXISTS hb_indexes (db TEXT NOT NULL, "
                "coll TEXT NOT NULL, name TEXT NOT NULL, spec BLOB NOT NULL, "
                "PRIMARY KEY (db, coll, name))")
    con.execute("CREATE TABLE IF NOT EXISTS hb_dicts (id INTEGER PRIMARY KEY, "
                "tbl TEXT NOT NULL, data BLOB NOT NULL)")
    con.execute("INSERT OR IGNORE INTO hb_meta VALUES ('format', ?)", (FORMAT,))
    con.execute(f"CREATE TABLE IF NOT EXISTS {MARKER} (name TEXT PRIMARY KEY)")
    con.execute(f"INSERT OR IGNORE INTO {MARKER} VALUES ('hitboard embedded store')")
    con.execute("COMMIT")


def read(con: sqlite3.Connection, packer: Packer) -> dict[tuple[str, str], Collection]:
    """Every collection as ``con`` sees it, by (database, name)."""
    found: dict[tuple[str, str], Collection] = {}
    for db, name, table in con.execute("SELECT db, name, tbl FROM hb_collections"):
        found[(db, name)] = Collection(db, name, table, packer=packer)
    for db, coll, name, spec in con.execute("SELECT db, coll, name, spec FROM hb_indexes"):
        if (db, coll) in found:
            found[(db, coll)].indexes[name] = bson.decode(spec)
    for info in found.values():
        names = [row[1] for row in con.execute(f"PRAGMA table_info({quote(info.table)})")]
        info.columns = [n[2:] for n in names if n.startswith("k:")]
        if "id" not in names:
            info.layout = layouts.of(info.name)
    return found
