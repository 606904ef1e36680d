"""Indexes for mongomock, which otherwise scans every document for every query.

Two paths, both answered from dicts and then checked against the whole filter with
mongomock's own matcher, so results are exactly what a scan would give:

- ``_id``: mongomock keeps a collection's documents in a dict keyed by ``_id``; a filter
  with a plain ``_id`` value (every recorder upsert, rollup write, checkpoint read) is one
  lookup.
- secondary: for each index created on a collection, a hash of its first two fields
  (``site, path`` of events; ``metadata.site, metadata.page`` of the stats). A filter with
  an equality on the first field, and an equality, ``$in`` or nothing on the second, reads
  only the matching buckets. Inserts and deletes maintain it (through the store's dict);
  an update that could change an indexed field marks it stale, to be rebuilt by the next
  query that uses it. Array or document values are kept aside and always checked.
"""

from __future__ import annotations

import datetime as dt
import heapq

from bson import ObjectId
from mongomock import collection as _collection
from mongomock import store as _store
from mongomock.filtering import filter_applies

_MISSING = object()
_UNINDEXABLE = object()
_SCALARS = (str, int, float, ObjectId, dt.datetime, bool, type(None))
# Datetimes are stored but never looked up: mongomock may hold them naive while a query
# holds them aware, and such values compare unequal in Python.
_LOOKUP = (str, int, float, ObjectId, bool, type(None))
_ID_TYPES = (str, int, ObjectId)
_original_iter = _collection.Collection._iter_documents
_original_set = _store.CollectionStore.__setitem__
_original_del = _store.CollectionStore.__delitem__
_original_drop = _store.CollectionStore.drop


class HashIndex:
    """``{first value: {second value: {_id: None}}}`` plus documents it cannot place."""

    def __init__(self, fields: tuple[str, ...]):
        self.fields = fields
        self.stale = True
        self._buckets: dict = {}
        self._where: dict = {}
        self.aside: dict = {}

    def rebuild(self, documents: dict) -> None:
        self._buckets, self._where, self.aside = {}, {}, {}
        for key, doc in documents.items():
            self.add(key, doc)
        self.stale = False

    def add(self, key, doc: dict) -> None:
        values = tuple(_value(doc, field) for field in self.fields)
        if _UNINDEXABLE in values:
            self.aside[key] = None
            return
        first, second = values[0], values[1] if len(values) > 1 else None
        self._buckets.setdefault(first, {}).setdefault(second, {})[key] = None
        self._where[key] = (first, second)

    def discard(self, key) -> None:
        if self.aside.pop(key, _MISSING) is not _MISSING:
            return
        place = self._where.pop(key, None)
        if place is not None:
            inner = self._buckets[place[0]]
            inner[place[1]].pop(key, None)
            if not inner[place[1]]:
                del inner[place[1]]
            if not inner:
                del self._buckets[place[0]]

    def candidates(self, filter: dict) -> tuple[list, bool] | None:
        """The keys that may match and whether they surely do (the filter only asks
        equality or ``$in`` on the indexed fields); None when the index cannot serve."""
        first = filter.get(self.fields[0], _MISSING)
        if not _is_scalar(first):
            return None
        inner = self._buckets.get(first, {})
        second = filter.get(self.fields[1], _MISSING) if len(self.fields) > 1 else _MISSING
        exact = set(filter) <= set(self.fields)
        if _is_scalar(second):
            seconds = [second]
        elif isinstance(second, dict) and list(second) == ["$in"] and all(
                _is_scalar(v) for v in second["$in"]):
            seconds = second["$in"]
        else:
            exact = exact and second is _MISSING
            keys = [key for bucket in inner.values() for key in bucket]
            return [*keys, *self.aside], exact
        keys = [key for value in dict.fromkeys(seconds)
                for key in inner.get(value, ())]
        return [*keys, *self.aside], exact


def _is_scalar(value) -> bool:
    return value is not _MISSING and type(value) in _LOOKUP


def _value(doc: dict, field: str):
    value = doc
    for part in field.split("."):
        if not isinstance(value, dict):
            return _UNINDEXABLE if isinstance(value, list) else None
        value = value.get(part)
    return value if type(value) in _SCALARS else _UNINDEXABLE


def add_index(collection, keys: list[tuple[str, object]]) -> None:
    """Index a mongomock collection on the first two fields of ``keys``."""
    fields = tuple(field for field, direction in keys[:2] if direction in (1, -1))
    if not fields or fields[0] == "_id":
        return
    indexes = _indexes(collection._store)
    if all(index.fields != fields for index in indexes):
        indexes.append(HashIndex(fields))


def touched(collection, update) -> None:
    """Mark stale the indexes an update may have changed (replacements: all of them)."""
    indexes = _indexes(collection._store)
    if not indexes:
        return
    operators = isinstance(update, dict) and any(op.startswith("$") for op in update)
    # $setOnInsert only shapes new documents, which reach the index when inserted.
    paths = [path for op, spec in update.items()
             if op != "$setOnInsert" and isinstance(spec, dict) for path in spec
             ] if operators else None
    for index in indexes:
        if paths is None or any(_overlaps(path, field) for path in paths
                                for field in index.fields):
            index.stale = True


def _overlaps(path: str, field: str) -> bool:
    return path == field or field.startswith(path + ".") or path.startswith(field + ".")


def _indexes(store) -> list[HashIndex]:
    if "_hitboard_indexes" not in store.__dict__:
        store._hitboard_indexes = []
    return store._hitboard_indexes


def _iter_documents(self, filter):
    if type(filter) is not dict:
        return _original_iter(self, filter)
    documents = self._store._documents
    key = filter.get("_id", _MISSING)
    if type(key) in _ID_TYPES:
        doc = documents.get(key)
        return iter((doc,) if doc is not None and filter_applies(filter, doc) else ())
    if type(key) is dict and list(key) == ["$in"] and all(type(k) in _ID_TYPES
                                                          for k in key["$in"]):
        found = (documents.get(k) for k in dict.fromkeys(key["$in"]))
        if len(filter) == 1:  # the lookup is the whole answer
            return (doc for doc in found if doc is not None)
        return (doc for doc in found if doc is not None and filter_applies(filter, doc))
    for index in _indexes(self._store):
        found = index.candidates(filter)
        if found is None:
            continue
        if index.stale:
            index.rebuild(documents)
            found = index.candidates(filter)
        keys, exact = found
        if exact:
            # The buckets are the answer (scalar equality or $in on indexed fields);
            # only documents kept aside still need the matcher.
            aside = index.aside
            return (doc for doc in (documents.get(k) for k in keys) if doc is not None
                    and (doc["_id"] not in aside or filter_applies(filter, doc)))
        return (doc for doc in (documents.get(k) for k in keys)
                if doc is not None and filter_applies(filter, doc))
    return _original_iter(self, filter)


def top_ids(engine, filter: dict, field: str, direction: int, k: int) -> list | None:
    """The ``_id``s of the first ``k`` matches in ``field`` order, ties at the cut
    included, so mongomock sorts and copies k documents instead of every match. None when
    the values are not plainly comparable (then mongomock sorts everything as usual)."""
    docs = list(_iter_documents(engine, filter))
    if len(docs) <= k:
        return None
    values = [_value(doc, field) for doc in docs]
    kinds = {type(v) for v in values}
    if not (kinds <= {int, float} or kinds in ({str}, {dt.datetime})) or any(
            type(doc["_id"]) not in _ID_TYPES for doc in docs):
        return None
    pick = heapq.nlargest if direction == -1 else heapq.nsmallest
    try:
        chosen = pick(k, range(len(docs)), key=values.__getitem__)
    except TypeError:
        return None
    edge = values[chosen[-1]]
    keep = set(chosen) | {i for i, v in enumerate(values) if v == edge}
    return [docs[i]["_id"] for i in sorted(keep)]


def _setitem(self, key, value):
    _original_set(self, key, value)
    for index in _indexes(self):
        if not index.stale:
            index.discard(key)
            index.add(key, value)


def _delitem(self, key):
    _original_del(self, key)
    for index in _indexes(self):
        if not index.stale:
            index.discard(key)


def _drop(self):
    _original_drop(self)
    self._hitboard_indexes = []


def install() -> None:
    _collection.Collection._iter_documents = _iter_documents
    _store.CollectionStore.__setitem__ = _setitem
    _store.CollectionStore.__delitem__ = _delitem
    _store.CollectionStore.drop = _drop
