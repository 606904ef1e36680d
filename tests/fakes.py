"""Test doubles around a real pymongo-API database: fault injection, call recording,
and the query plan a real MongoDB picks.

They wrap the ``db`` fixture's database, so the same faults run against the embedded
store and a real MongoDB.
"""

from __future__ import annotations

import contextlib

import pytest
from pymongo import InsertOne
from pymongo.errors import AutoReconnect, BulkWriteError

import queries
from queries.stats import schema

HOST_UNREACHABLE = 6


class _Collection:
    def __init__(self, owner, collection):
        self._owner = owner
        self._collection = collection

    def __getattr__(self, name):
        return getattr(self._collection, name)

    def bulk_write(self, requests, ordered=True, **kwargs):
        requests = list(requests)
        self._owner.bulk_calls += 1
        fault = self._owner.faults.pop(0) if self._owner.faults else None
        return fault(self._collection, requests, ordered) if fault else \
            self._collection.bulk_write(requests, ordered=ordered, **kwargs)

    def find(self, *args, **kwargs):
        self._owner.finds.append((self._collection.name, args, kwargs))
        return self._collection.find(*args, **kwargs)


class WrappedDB:
    """Proxies a database; ``faults`` is a queue of callables that replace the next
    ``bulk_write`` calls (``None`` entries let a call through). ``finds`` records every
    ``find`` call as (collection, args, kwargs)."""

    def __init__(self, db, faults=()):
        self._db = db
        self.faults = list(faults)
        self.finds: list[tuple] = []
        self.bulk_calls = 0

    def __getitem__(self, name):
        return _Collection(self, self._db[name])

    def __getattr__(self, name):
        return getattr(self._db, name)


def fail_before(collection, requests, ordered):
    """The connection drops before the server sees the batch."""
    raise AutoReconnect("connection reset before the write")


def fail_after(collection, requests, ordered):
    """The server applies the batch, then the reply is lost: outcome unknown."""
    with contextlib.suppress(BulkWriteError):  # the reply, whatever it said, is lost
        collection.bulk_write(requests, ordered=ordered)
    raise AutoReconnect("connection reset after the write")


def fail_half(collection, requests, ordered):
    """An unordered batch where every other request fails (as a shard going away would)."""
    applied = [r for i, r in enumerate(requests) if i % 2 == 0]
    errors = [{"index": i, "code": HOST_UNREACHABLE, "errmsg": "shard unreachable", "op": {}}
              for i in range(len(requests)) if i % 2]
    try:
        if applied:
            collection.bulk_write(applied, ordered=False)
    except BulkWriteError as exc:  # e.g. duplicate keys of a retry: report them too
        errors += [{**e, "index": 2 * e["index"]} for e in exc.details["writeErrors"]]
    raise BulkWriteError({"writeErrors": errors, "writeConcernErrors": [], "nInserted": 0,
                          "nUpserted": len(applied), "nMatched": 0, "nModified": 0,
                          "nRemoved": 0, "upserted": []})


def lose_insert_race(collection, requests, ordered):
    """Another writer creates every document between our filter and our insert, so each
    upsert fails with a duplicate key although ours was not applied."""
    for request in requests:
        if isinstance(request, InsertOne):      # a new document, sent whole
            doc_id, meta = request._doc["_id"], request._doc["metadata"]
        else:
            doc_id, meta = request._filter["_id"], request._doc["$setOnInsert"]["metadata"]
        field = "daily" if collection.name == schema.DAILY else "monthly"
        collection.update_one({"_id": doc_id},
                              {"$inc": {field: 1000}, "$setOnInsert": {"metadata": meta}},
                              upsert=True)
    errors = [{"index": i, "code": 11000, "errmsg": "E11000 duplicate key", "op": {}}
              for i in range(len(requests))]
    raise BulkWriteError({"writeErrors": errors, "writeConcernErrors": [], "nInserted": 0,
                          "nUpserted": 0, "nMatched": 0, "nModified": 0, "nRemoved": 0,
                          "upserted": []})


def indexes_used(db, collection: str, query: dict) -> set[str]:
    """The indexes of the winning plan of ``find(query)``; skips the test where the
    backend has no MongoDB query planner to ask."""
    if queries.is_embedded(db):
        pytest.skip("the embedded store has no explain(): checked on a real MongoDB")
    explained = db[collection].find(query).explain()
    if "queryPlanner" not in explained:
        pytest.skip(f"this backend's explain() has no MongoDB query plan "
                    f"(engine {explained.get('engine', '?')}): checked on a real MongoDB")
    names, stack = set(), [explained["queryPlanner"]["winningPlan"]]
    while stack:
        stage = stack.pop()
        if "indexName" in stage:
            names.add(stage["indexName"])
        stack.extend(stage.get("inputStages", []))
        stack.extend(s for s in (stage.get("inputStage"), stage.get("queryPlan")) if s)
    return names


class UnseenCollection:
    """A collection whose reads find nothing: as if another writer created the
    documents between the caller's read and its write (a race, made certain)."""

    def __init__(self, collection):
        self._collection = collection

    def find(self, *_args, **_kwargs):
        return []

    def __getattr__(self, name):
        return getattr(self._collection, name)


class UnseenDatabase:
    """A database whose collections are ``UnseenCollection``s."""

    def __init__(self, db):
        self._db = db

    def __getitem__(self, name):
        return UnseenCollection(self._db[name])

    def __getattr__(self, name):
        return getattr(self._db, name)


def stored_events(db, site: str | None = None) -> list[dict]:
    """Every raw event stored (``site``'s), unpacked from its bucket, in write order."""
    from queries.events import buckets

    found = db[schema.EVENTS].find({} if site is None else {"site": site},
                                   sort=[("_id", 1)])
    return [event for bucket in found for event in buckets.events(bucket, range(bucket["n"]))]


def stored_count(db, site: str | None = None) -> int:
    """How many raw events are stored (``site``'s)."""
    from queries.events import buckets

    return buckets.events_in(db, {} if site is None else {"site": site})
