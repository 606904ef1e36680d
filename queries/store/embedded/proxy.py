"""The pymongo-shaped face of the embedded store: Client, Database, Collection, Cursor.

Only the subset hitboard uses is offered, with pymongo's signatures, result types and
exceptions, so ``queries/`` runs the same calls on a MongoDB server and here. Each write
is one SQLite transaction (a ``bulk_write`` is one for all its requests); each read
runs on the calling thread's own connection, beside writers in this and other processes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import bson
from pymongo.errors import BulkWriteError, OperationFailure, PyMongoError
from pymongo.results import (
    BulkWriteResult,
    DeleteResult,
    InsertManyResult,
    InsertOneResult,
    UpdateResult,
)

from . import documents, explain, keys, reading
from .requests import describe
from .store import EmbeddedStore


class EmbeddedClient:
    """Stands in for ``MongoClient``: ``db.client.close()`` releases the store."""

    def __init__(self, store: EmbeddedStore):
        self.store = store

    def close(self) -> None:
        self.store.release()

    def __getitem__(self, name: str) -> EmbeddedDatabase:
        return EmbeddedDatabase(self, name)

    def __getattr__(self, name: str) -> EmbeddedDatabase:
        if name.startswith("_"):
            raise AttributeError(name)
        return self[name]

    def list_database_names(self) -> list[str]:
        return self.store.database_names()


class EmbeddedDatabase:
    def __init__(self, client: EmbeddedClient, name: str):
        self.client = client
        self.name = name
        self._store = client.store

    def __getitem__(self, name: str) -> EmbeddedCollection:
        return EmbeddedCollection(self, name)

    def __getattr__(self, name: str) -> EmbeddedCollection:
        if name.startswith("_"):
            raise AttributeError(name)
        return self[name]

    def get_collection(self, name: str, **_options) -> EmbeddedCollection:
        return self[name]

    def list_collection_names(self) -> list[str]:
        return self._store.collection_names(self.name)

    def drop_collection(self, name: str) -> None:
        self._store.drop_collection(self.name, name)

    def command(self, name, value=None, **_kwargs) -> dict:
        """``ping``, ``hello`` and ``explain`` (of a find or count), as a server answers."""
        if isinstance(name, Mapping):
            (name, value), = list(name.items())[:1]
        if name == "ping":
            return {"ok": 1.0}
        if name == "hello":
            return {"ok": 1.0, "isWritablePrimary": True, "embedded": True}
        if name == "explain" and isinstance(value, Mapping):
            collection = value.get("find") or value.get("count")
            con = self._store.reader()
            return explain.explain(con, self._store.collection(self.name, collection, con),
                                     value)
        raise OperationFailure(f"command {name!r} is not available on the embedded store",
                               code=59)


class EmbeddedCollection:
    def __init__(self, database: EmbeddedDatabase, name: str):
        self.database = database
        self.name = name
        self._store = database._store

    def _info(self, con=None):
        return self._store.collection(self.database.name, self.name, con)

    @contextmanager
    def _writing(self):
        """(connection, collection) inside one write transaction, creating it if new."""
        with self._store.writing() as con:
            yield con, self._store.ensure_collection(con, self.database.name, self.name)

    # -- writes --------------------------------------------------------------------------
    def insert_one(self, document: dict, **_kw) -> InsertOneResult:
        with self._writing() as (con, info):
            errors = documents.insert(con, info, [document])
        if errors:
            raise errors[0][1]
        return InsertOneResult(document["_id"], acknowledged=True)

    def insert_many(self, docs, ordered: bool = True, **_kw) -> InsertManyResult:
        docs = list(docs)
        info = self._info()
        prepared = None if info is None else documents.prepare(info, docs)
        with self._writing() as (con, info):
            errors = documents.insert(con, info, docs, ordered, prepared)
        if errors:
            failed = {index for index, _ in errors}
            last = errors[-1][0] if ordered else len(docs) - 1
            inserted = sum(1 for i in range(last + 1) if i not in failed)
            raise BulkWriteError({
                "nInserted": inserted, "nMatched": 0, "nModified": 0, "nRemoved": 0,
                "nUpserted": 0, "upserted": [], "writeConcernErrors": [],
                "writeErrors": [{"index": i, "code": e.code, "errmsg": str(e),
                                 "op": docs[i]} for i, e in errors]})
        return InsertManyResult([doc["_id"] for doc in docs], acknowledged=True)

    def update_one(self, filter: dict, update: dict, upsert: bool = False, **_kw):
        return self._update(filter, update, upsert, multi=False)

    def update_many(self, filter: dict, update: dict, upsert: bool = False, **_kw):
        return self._update(filter, update, upsert, multi=True)

    def replace_one(self, filter: dict, replacement: dict, upsert: bool = False, **_kw):
        if any(str(k).startswith("$") for k in replacement):
            raise ValueError("replacement can not include $ operators")
        return self._update(filter, replacement, upsert, multi=False)

    def _update(self, filter, update, upsert, multi) -> UpdateResult:
        with self._writing() as (con, info):
            matched, modified, upserted = documents.update(con, info, filter, update,
                                                           upsert, multi)
        raw = {"n": matched or int(upserted is not None), "nModified": modified}
        if upserted is not None:
            raw["upserted"] = upserted
        return UpdateResult(raw, acknowledged=True)

    def delete_one(self, filter: dict, **_kw) -> DeleteResult:
        with self._writing() as (con, info):
            return DeleteResult({"n": documents.delete(con, info, filter, False)}, True)

    def delete_many(self, filter: dict, **_kw) -> DeleteResult:
        with self._writing() as (con, info):
            return DeleteResult({"n": documents.delete(con, info, filter, True)}, True)

    def find_one_and_update(self, filter, update, upsert=False, return_document=False, **_kw):
        with self._writing():
            before = self.find_one(filter)
            self.update_one(filter, update, upsert=upsert)
            if not return_document:
                return before
            key = before["_id"] if before else filter.get("_id")
            return self.find_one({"_id": key} if key is not None else filter)

    def bulk_write(self, requests, ordered: bool = True, **_kw) -> BulkWriteResult:
        """pymongo's semantics, in one transaction: unordered batches try every request
        and report each failure; ordered ones stop at the first."""
        totals = {"nInserted": 0, "nMatched": 0, "nModified": 0, "nRemoved": 0, "nUpserted": 0}
        upserted, errors = [], []
        described = [describe(request) for request in requests]
        with self._writing() as (con, info):
            # Unordered only: an ordered batch stops at its first error, before later
            # requests that these would have written already.
            done = set() if ordered else _insert_all(con, info, described, totals, errors)
            rest = [index for index in range(len(described)) if index not in done]
            inserted = {} if ordered else {
                rest[at]: doc_id for at, doc_id in documents.insert_new_upserts(
                    con, info, [described[index] for index in rest]).items()}
            for index, request in enumerate(described):
                if index in done:
                    continue
                if index in inserted:
                    totals["nUpserted"] += 1
                    upserted.append({"index": index, "_id": inserted[index]})
                    continue
                try:
                    _apply(con, info, request, index, totals, upserted)
                except PyMongoError as exc:
                    errors.append({"index": index, "code": getattr(exc, "code", None) or 1,
                                   "errmsg": str(exc), "op": request.document})
                    if ordered:
                        break
        errors.sort(key=lambda error: error["index"])
        details = {**totals, "upserted": upserted, "writeErrors": errors,
                   "writeConcernErrors": []}
        if errors:
            raise BulkWriteError(details)
        return BulkWriteResult(details, acknowledged=True)

    # -- indexes ----------------------------------------------------------------------
    def create_index(self, keys, name: str | None = None, unique: bool = False,
                     expireAfterSeconds: int | None = None, **_options) -> str:  # noqa: N803
        if isinstance(keys, str):
            keys = [(keys, 1)]
        keys = [(field, direction) for field, direction in keys]
        name = name or "_".join(f"{field}_{direction}" for field, direction in keys)
        self._store.create_index(self.database.name, self.name, name, keys, unique,
                                 expireAfterSeconds)
        return name

    def drop_index(self, name: str) -> None:
        self._store.drop_index(self.database.name, self.name, name)

    def index_information(self) -> dict:
        info = self._info()
        out = {"_id_": {"key": [("_id", 1)], "v": 2}}
        for name, spec in (info.indexes.items() if info else ()):
            entry: dict[str, Any] = {"key": [tuple(pair) for pair in spec["key"]], "v": 2}
            if spec.get("unique"):
                entry["unique"] = True
            if "expireAfterSeconds" in spec:
                entry["expireAfterSeconds"] = spec["expireAfterSeconds"]
            out[name] = entry
        return out

    def drop(self) -> None:
        self.database.drop_collection(self.name)

    # -- reads ---------------------------------------------------------------------------
    def find(self, filter: dict | None = None, projection=None, **kwargs) -> EmbeddedCursor:
        return EmbeddedCursor(self, filter or {}, projection, **kwargs)

    def find_one(self, filter=None, projection=None, **kwargs):
        if filter is not None and not isinstance(filter, Mapping):
            filter = {"_id": filter}
        for doc in self.find(filter, projection, limit=1, **kwargs):
            return doc
        return None

    def count_documents(self, filter: dict, **_kw) -> int:
        con = self._store.reader()
        return reading.count(con, self._info(con), filter)

    def estimated_document_count(self, **_kw) -> int:
        return self.count_documents({})

    def distinct(self, key: str, filter: dict | None = None, **_kw) -> list:
        con = self._store.reader()
        return reading.distinct(con, self._info(con), key, filter or {})

    def aggregate(self, pipeline: list[dict], **_kw) -> Iterator[dict]:
        con = self._store.reader()
        stages = list(pipeline)
        if stages and isinstance(stages[0], Mapping) and "$collStats" in stages[0]:
            return iter(explain.coll_stats(con, self._info(con), stages))
        return iter(reading.aggregate(con, self._info(con), stages))


class EmbeddedCursor:
    """Records sort/skip/limit like pymongo's cursor; runs the query when iterated."""

    def __init__(self, collection: EmbeddedCollection, filter: dict, projection=None,
                 sort=None, skip: int = 0, limit: int = 0, **_kw):
        self._collection = collection
        self._filter = filter
        self._projection = projection
        self._sort = _sort_spec(sort) if sort else None
        self._skip = skip
        self._limit = limit
        self._results: Iterator[dict] | None = None

    def sort(self, key_or_list, direction: int | None = None) -> EmbeddedCursor:
        self._sort = _sort_spec(key_or_list, direction)
        return self

    def skip(self, n: int) -> EmbeddedCursor:
        self._skip = n
        return self

    def limit(self, n: int) -> EmbeddedCursor:
        self._limit = n
        return self

    def __iter__(self) -> Iterator[dict]:
        if self._results is None:
            store = self._collection._store
            con = store.reader()
            info = self._collection._info(con)
            self._results = iter(reading.find(con, info, self._filter, self._projection,
                                                self._sort, self._skip, self._limit))
        return self._results

    def __next__(self) -> dict:
        return next(iter(self))


def _sort_spec(key_or_list, direction: int | None = None) -> list[tuple[str, int]]:
    if isinstance(key_or_list, str):
        return [(key_or_list, direction or 1)]
    if isinstance(key_or_list, Mapping):
        return list(key_or_list.items())
    return [tuple(pair) for pair in key_or_list]


def _insert_all(con, info, requests: list, totals: dict, errors: list) -> set[int]:
    """The inserts of an unordered bulk write in one statement (a flush's new counter
    documents: ``queries.counting.guarded``); returns their indexes, each refused one
    reported in ``errors``. A batch whose rows cannot be built leaves every request to
    ``_apply``, which reports each one's error."""
    at = [index for index, request in enumerate(requests) if request.kind == "insert"]
    if len(at) < 2:
        return set()
    docs = [documents.with_id(requests[index].document) for index in at]
    try:
        prepared = documents.prepare(info, docs)
    except (PyMongoError, bson.InvalidDocument, keys.UnindexableValueError):
        return set()
    refused = documents.insert(con, info, docs, False, prepared)
    for index, exc in refused:
        errors.append({"index": at[index], "code": exc.code, "errmsg": str(exc),
                       "op": docs[index]})
    totals["nInserted"] += len(docs) - len(refused)
    return set(at)


def _apply(con, info, request, index: int, totals: dict, upserted: list) -> None:
    if request.kind == "insert":
        errors = documents.insert(con, info, [request.document])
        if errors:
            raise errors[0][1]
        totals["nInserted"] += 1
    elif request.kind == "delete":
        totals["nRemoved"] += documents.delete(con, info, request.filter, request.multi)
    else:
        matched, modified, new_id = documents.update(con, info, request.filter,
                                                     request.document, request.upsert,
                                                     request.multi)
        if new_id is not None:
            totals["nUpserted"] += 1
            upserted.append({"index": index, "_id": new_id})
        totals["nMatched"] += matched
        totals["nModified"] += modified

