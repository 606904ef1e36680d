"""pymongo's bulk write requests, read for the embedded store's ``bulk_write``.

pymongo offers no public accessors for what an ``InsertOne``/``UpdateOne``/... holds, so
this is the one module that reads their private attributes; a pymongo upgrade that
renames them breaks here, in one place, with a clear error.
"""

from __future__ import annotations

from dataclasses import dataclass

from pymongo import DeleteMany, DeleteOne, InsertOne, ReplaceOne, UpdateMany, UpdateOne


@dataclass(frozen=True)
class Request:
    kind: str                 # insert | update | delete
    filter: dict
    document: dict | None     # the inserted document, the update or the replacement
    upsert: bool = False
    multi: bool = False


def describe(request) -> Request:
    if isinstance(request, InsertOne):
        return Request("insert", {}, request._doc)
    if isinstance(request, DeleteOne | DeleteMany):
        return Request("delete", request._filter, None, multi=isinstance(request, DeleteMany))
    if isinstance(request, UpdateOne | UpdateMany | ReplaceOne):
        return Request("update", request._filter, request._doc, bool(request._upsert),
                       multi=isinstance(request, UpdateMany))
    raise TypeError(f"{type(request).__name__} is not a supported bulk write request")
