"""Convert a store of the first embedded format (snapshot + journal) on first open.

The old files are replayed into the SQLite database through the store's own API, then
moved aside into ``DIR/format-0/`` (kept, not deleted: the user removes them once happy).
An ``flock`` on ``DIR/LOCK`` — the lock the old format's writer held — makes the
conversion wait for nobody and refuse while an old hitboard still has the store open.
The conversion is one transaction: a crash in the middle leaves the old files in place and
the database without them, and the next open converts again from the start.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from ...errors import StoreLockedError
from . import journal

ARCHIVE = "format-0"
_REPLAYED = ("insert_one", "insert_many", "update_one", "update_many", "replace_one",
             "delete_one", "delete_many", "create_index", "drop_index", "drop")


def needed(directory) -> bool:
    return journal.present(Path(directory).expanduser())


def convert(client) -> int:
    """Replay the old files into ``client``'s store; returns how many records were read."""
    store = client.store
    directory = store.directory
    with (directory / "LOCK").open("a+") as lock:
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            holder = lock.read().strip() or "another process"
            raise StoreLockedError(
                f"the embedded store {directory} is in the old format and in use by "
                f"{holder}: stop it, then open the store again to convert it") from None
        if not needed(directory):  # converted by another process while we waited
            return 0
        with store.writing():
            count = _replay(client, directory)
        _archive(directory)
        return count


def _replay(client, directory: Path) -> int:
    header, docs = journal.read_snapshot(directory)
    count = 0
    for spec in header.get("indexes", []):
        _apply(client, spec["db"], spec["c"], "create_index", [spec["keys"]], spec["options"])
        count += 1
    batch: dict[tuple[str, str], list[dict]] = {}
    for record in docs:
        batch.setdefault((record["db"], record["c"]), []).append(record["d"])
        count += 1
    for (db, coll), documents in batch.items():
        client[db][coll].insert_many(documents)
    for record in journal.read_journal(journal.journal_path(directory, header["generation"])):
        _apply(client, record["db"], record["c"], record["op"], record["a"], record["k"])
        count += 1
    return count


def _apply(client, db: str, coll: str, op: str, args: list, kwargs: dict) -> None:
    if op not in _REPLAYED:
        raise StoreLockedError(f"cannot convert the old store: unknown journal operation {op}")
    collection = client[db][coll]
    if op == "create_index":
        options = {k: v for k, v in kwargs.items() if k in ("name", "unique",
                                                              "expireAfterSeconds")}
        collection.create_index([tuple(pair) for pair in args[0]], **options)
    elif op == "drop":
        collection.drop()
    else:
        getattr(collection, op)(*args, **{k: v for k, v in kwargs.items() if k == "upsert"})


def _archive(directory: Path) -> None:
    archive = directory / ARCHIVE
    archive.mkdir(exist_ok=True)
    for path in [directory / journal.SNAPSHOT, *directory.glob("journal-*.bson")]:
        if path.exists():
            os.replace(path, archive / path.name)
