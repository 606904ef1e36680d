"""The pymongo-shaped face of the embedded store: Database, Collection and Cursor.

Only the subset hitboard uses is offered, with pymongo's signatures, result types and
exceptions, so ``queries/`` runs the same calls on a real server and here. Reads take the
store lock and materialise their results, so no thread ever iterates a collection while
another writes to it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mongomock.aggregate import process_pipeline
from pymongo import DeleteMany, DeleteOne, InsertOne, ReplaceOne, UpdateMany, UpdateOne
from pymongo.errors import BulkWriteError, PyMongoError
from pymongo.results import BulkWriteResult

from . import fastpath
from .store import EmbeddedStore


class EmbeddedClient:
    """Stands in for ``MongoClient``: ``db.client.close()`` releases the store."""

    def __init__(self, store: EmbeddedStore):
        self.store = store

    def close(self) -> None:
        self.store.release()

    def __getitem__(self, name: str) -> EmbeddedDatabase:
        return EmbeddedDatabase(self, name)


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
        with self._store.lock:
            return self._store._client[self.name].list_collection_names()

    def drop_collection(self, name: str) -> None:
        self._store.write(self.name, name, "drop", [])

    def command(self, name: str, *_args, **_kwargs) -> dict:
        if name == "ping":
            return {"ok": 1.0}
        raise PyMongoError(f"command {name!r} is not available on the embedded store")


class EmbeddedCollection:
    def __init__(self, database: EmbeddedDatabase, name: str):
        self.database = database
        self.name = name
        self.full_name = f"{database.name}.{name}"
        self._store = database._store

    def _engine(self):
        return self._store.collection(self.database.name, self.name)

    def _write(self, op: str, *args, **kwargs):
        return self._store.write(self.database.name, self.name, op, list(args), kwargs)

    # -- writes --------------------------------------------------------------------------
    def insert_one(self, document: dict, **_kw):
        return self._write("insert_one", document)

    def insert_many(self, documents, ordered: bool = True, **_kw):
        documents = list(documents)
        if ordered:
            return self._write("insert_many", documents)
        result = self.bulk_write([InsertOne(doc) for doc in documents], ordered=False)
        return result

    def update_one(self, filter: dict, update: dict, upsert: bool = False, **_kw):
        return self._write("update_one", filter, update, upsert=upsert)

    def update_many(self, filter: dict, update: dict, upsert: bool = False, **_kw):
        return self._write("update_many", filter, update, upsert=upsert)

    def replace_one(self, filter: dict, replacement: dict, upsert: bool = False, **_kw):
        return self._write("replace_one", filter, replacement, upsert=upsert)

    def delete_one(self, filter: dict, **_kw):
        return self._write("delete_one", filter)

    def delete_many(self, filter: dict, **_kw):
        return self._write("delete_many", filter)

    def find_one_and_update(self, filter, update, upsert=False, return_document=False, **_kw):
        with self._store.lock:
            before = self.find_one(filter)
            self.update_one(filter, update, upsert=upsert)
            if not return_document:
                return before
            key = before["_id"] if before else filter.get("_id")
            return self.find_one({"_id": key} if key is not None else filter)

    def bulk_write(self, requests, ordered: bool = True, **_kw) -> BulkWriteResult:
        """pymongo's semantics: unordered batches try every request and report each failure."""
        totals = {"nInserted": 0, "nMatched": 0, "nModified": 0, "nRemoved": 0, "nUpserted": 0}
        upserted, errors = [], []
        with self._store.lock:
            for index, request in enumerate(requests):
                try:
                    _apply_request(self, request, index, totals, upserted)
                except PyMongoError as exc:
                    errors.append({
                        "index": index, "code": getattr(exc, "code", None) or 1,
                        "errmsg": str(exc),
                        "op": getattr(request, "_doc", None) or getattr(request, "_filter", None),
                    })
                    if ordered:
                        break
        details = {**totals, "upserted": upserted, "writeErrors": errors,
                   "writeConcernErrors": []}
        if errors:
            raise BulkWriteError(details)
        return BulkWriteResult(details, acknowledged=True)

    # -- indexes ----------------------------------------------------------------------
    def create_index(self, keys, **options) -> str:
        if isinstance(keys, str):
            keys = [(keys, 1)]
        return self._write("create_index", [list(pair) for pair in keys], **options)

    def drop_index(self, name: str) -> None:
        self._write("drop_index", name)

    def index_information(self) -> dict:
        with self._store.lock:
            return self._engine().index_information()

    def list_indexes(self) -> Iterator[dict]:
        info = self.index_information()
        return iter([{"name": name, **spec} for name, spec in info.items()])

    def drop(self) -> None:
        self.database.drop_collection(self.name)

    def cap_documents(self, max_documents: int, oldest_by: str) -> None:
        """Embedded store only: keep at most ``max_documents``, oldest removed first."""
        self._store.cap(self.database.name, self.name, max_documents, oldest_by)

    # -- reads ---------------------------------------------------------------------------
    def find(self, filter: dict | None = None, projection=None, **kwargs) -> EmbeddedCursor:
        return EmbeddedCursor(self, filter or {}, projection, **kwargs)

    def find_one(self, filter=None, projection=None, **kwargs):
        if filter is not None and not isinstance(filter, dict):
            filter = {"_id": filter}
        for doc in self.find(filter, projection, limit=1, **kwargs):
            return doc
        return None

    def count_documents(self, filter: dict, **kwargs) -> int:
        with self._store.lock:
            return self._engine().count_documents(filter, **kwargs)

    def estimated_document_count(self, **_kw) -> int:
        with self._store.lock:
            return self._engine().estimated_document_count()

    def distinct(self, key: str, filter: dict | None = None, **_kw) -> list:
        with self._store.lock:
            return self._engine().distinct(key, filter)

    def aggregate(self, pipeline: list[dict], **_kw) -> Iterator[dict]:
        engine = self._engine()
        if not (pipeline and "$match" in pipeline[0]):
            with self._store.lock:
                return iter(list(engine.aggregate(pipeline)))
        # mongomock copies the whole collection before any stage; a leading $match runs
        # as an (indexed) find instead, so only matching documents are copied, and the
        # later stages work on those copies without holding the store lock.
        docs = list(self.find(pipeline[0]["$match"]))
        return iter(list(process_pipeline(docs, engine.database, pipeline[1:], None)))


class EmbeddedCursor:
    """Records sort/skip/limit like pymongo's cursor; runs the query under the store lock."""

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
            with store.lock:
                engine = self._collection._engine()
                filter = self._filter
                if self._sort and len(self._sort) == 1 and self._limit > 0:
                    ids = fastpath.top_ids(engine, filter, *self._sort[0],
                                           self._skip + self._limit)
                    filter = {"_id": {"$in": ids}} if ids is not None else filter
                cursor = engine.find(filter, self._projection)
                if self._sort:
                    cursor = cursor.sort(self._sort)
                if self._skip:
                    cursor = cursor.skip(self._skip)
                if self._limit:
                    cursor = cursor.limit(self._limit)
                # mongomock's own iteration re-slices its result list for every row
                # (quadratic); take the computed list once.
                self._results = iter(cursor._compute_results(with_limit_and_skip=True))
        return self._results

    def __next__(self) -> dict:
        return next(iter(self))

    def to_list(self, length: int | None = None) -> list[dict]:
        docs = list(self)
        return docs if length is None else docs[:length]


def _sort_spec(key_or_list, direction: int | None = None) -> list[tuple[str, int]]:
    if isinstance(key_or_list, str):
        return [(key_or_list, direction or 1)]
    if isinstance(key_or_list, dict):
        return list(key_or_list.items())
    return [tuple(pair) for pair in key_or_list]


def _apply_request(coll: EmbeddedCollection, request: Any, index: int, totals: dict,
                   upserted: list) -> None:
    if isinstance(request, InsertOne):
        coll.insert_one(request._doc)
        totals["nInserted"] += 1
        return
    if isinstance(request, DeleteOne | DeleteMany):
        method = coll.delete_one if isinstance(request, DeleteOne) else coll.delete_many
        totals["nRemoved"] += method(request._filter).deleted_count
        return
    if isinstance(request, UpdateOne | UpdateMany | ReplaceOne):
        if isinstance(request, ReplaceOne):
            result = coll.replace_one(request._filter, request._doc, upsert=bool(request._upsert))
        elif isinstance(request, UpdateOne):
            result = coll.update_one(request._filter, request._doc, upsert=bool(request._upsert))
        else:
            result = coll.update_many(request._filter, request._doc, upsert=bool(request._upsert))
        if result.upserted_id is not None:
            totals["nUpserted"] += 1
            upserted.append({"index": index, "_id": result.upserted_id})
        else:
            totals["nMatched"] += result.matched_count
            totals["nModified"] += result.modified_count
        return
    raise TypeError(f"{type(request).__name__} is not a supported bulk write request")
