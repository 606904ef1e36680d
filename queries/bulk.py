"""Writes of many documents by ``_id`` that another writer may race (a backfill beside
the live recorder, two rollup runs): look the documents up a few hundred ids at a time,
then insert the new ones, learning which another writer inserted in between."""

from __future__ import annotations

from collections.abc import Iterator

from pymongo.errors import BulkWriteError

from .errors import DUPLICATE_KEY

# Documents looked up by ``_id`` per query: each read's cost follows the documents it
# names, never those stored (the embedded store answers an ``$in`` of up to
# ``planner.MAX_IN`` values from its index; MongoDB any length), in short statements.
IDS_PER_QUERY = 500


def find_by_ids(collection, ids: list, projection: dict) -> Iterator[dict]:
    """The stored documents among ``ids`` (``projection`` of each)."""
    for i in range(0, len(ids), IDS_PER_QUERY):
        yield from collection.find({"_id": {"$in": ids[i:i + IDS_PER_QUERY]}}, projection)


def insert_new(collection, docs: list[dict]) -> list[int]:
    """Insert ``docs`` (unordered); returns the indexes of those another writer inserted
    first (a duplicate ``_id``). Any other failure raises."""
    if not docs:
        return []
    try:
        collection.insert_many(docs, ordered=False)
    except BulkWriteError as exc:
        errors = exc.details["writeErrors"]
        if exc.details.get("writeConcernErrors") or any(
                e.get("code") != DUPLICATE_KEY for e in errors):
            raise
        return [e["index"] for e in errors]
    return []
