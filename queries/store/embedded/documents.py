"""A collection's documents in its SQLite table: insert, update and delete (reads are in
``reading.py``).

A row is ``(rid, id, doc, k:<field>...)``: ``id`` the key of ``_id`` (unique), ``doc`` the
whole document as BSON, compressed once its collection has a dictionary (``packing.py``),
and one key column per indexed field (``keys.py``). Every
operation first asks the planner for the SQL condition of its filter; rows it returns
are decoded, and checked by the matcher unless the condition was the whole filter. Writes
run inside the store's write transaction, so a read-modify-write is atomic against every
other thread and process.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Mapping
from functools import lru_cache

import bson
from bson import ObjectId
from pymongo.errors import DuplicateKeyError, WriteError

from ...errors import DUPLICATE_KEY
from . import keys, matcher, planner, splice, updater
from .planner import ID_COLUMN, column_name, quote
from .reading import candidates, decode


def key_values(doc: Mapping, paths: list[str]) -> list:
    encode = keys.encode
    return [encode(doc.get(path) if "." not in path else matcher.get(doc, path), path)
            for path in paths]


def _row(info, doc: Mapping) -> tuple:
    if "_id" not in doc:
        raise WriteError("a document needs an _id", code=2)
    return (keys.encode(doc["_id"], "_id"), info.packer.pack(info.table, bson.encode(doc)),
            *key_values(doc, info.columns))


def _rows(info, docs: list[dict]) -> list[tuple]:
    """``_row`` of each document (given an ``_id`` if it has none), inlined for bulk
    inserts: strings, numbers and nulls are their own keys, and each distinct date is
    encoded once per call (a batch's documents share their ``ingested`` stamp, and log
    lines their seconds)."""
    columns = [(path, "." in path) for path in info.columns]
    encode, to_bson, get = keys.encode, bson.encode, matcher.get
    pack, table = info.packer.pack, info.table
    dates: dict = {}
    rows = []
    for doc in docs:
        if "_id" not in doc:
            doc["_id"] = ObjectId()
        row = [encode(doc["_id"], "_id"), pack(table, to_bson(doc))]
        for path, nested in columns:
            value = get(doc, path) if nested else doc.get(path)
            kind = type(value)
            if kind is str or kind is int or value is None:
                row.append(value)
            elif kind is dt.datetime:
                key = dates.get(value)
                if key is None:
                    key = dates[value] = encode(value, path)
                row.append(key)
            else:
                row.append(encode(value, path))
        rows.append(tuple(row))
    return rows


def _insert_sql(info) -> str:
    return _insert_statement(info.table, tuple(info.columns))


@lru_cache(maxsize=256)
def _insert_statement(table: str, columns: tuple[str, ...]) -> str:
    """The INSERT of a row into ``table`` (one per upsert that inserts: built once)."""
    names = [ID_COLUMN, "doc", *(column_name(c) for c in columns)]
    return (f"INSERT INTO {quote(table)} ({', '.join(quote(n) for n in names)}) "
            f"VALUES ({', '.join('?' * len(names))})")


def _duplicate(info, doc: Mapping) -> DuplicateKeyError:
    return DuplicateKeyError(
        f"E11000 duplicate key error collection: {info.db}.{info.name} dup key: "
        f"{{ _id: {doc.get('_id')!r} }}", DUPLICATE_KEY, {"keyValue": {"_id": doc.get("_id")}})


def with_id(doc: dict) -> dict:
    """pymongo's way: a document without ``_id`` gets an ObjectId, in the caller's dict."""
    if "_id" not in doc:
        doc["_id"] = ObjectId()
    return doc


# -- writes ------------------------------------------------------------------------------
def prepare(info, docs: list[dict]) -> tuple[tuple[str, ...], list[tuple]]:
    """The rows of ``docs`` for the collection's columns as they stand: built before the
    write transaction (encoding is most of an insert's work, and other writers need
    not wait for it), used by :func:`insert` if the columns are still those."""
    return tuple(info.columns), _rows(info, docs)


def insert(con, info, docs: list[dict], ordered: bool = True,
           prepared: tuple[tuple[str, ...], list[tuple]] | None = None,
           ) -> list[tuple[int, Exception]]:
    """Insert ``docs``; returns the (index, error) of each refused one (ordered: the
    first error stops the rest)."""
    sql = _insert_sql(info)
    if prepared is not None and prepared[0] == tuple(info.columns):
        rows = prepared[1]
    else:
        rows = _rows(info, docs)
    rows = info.packer.packed(con, info.table, rows)
    con.execute("SAVEPOINT bulk_insert")
    try:
        con.executemany(sql, rows)
    except (sqlite3.IntegrityError, keys.UnindexableValueError):
        con.execute("ROLLBACK TO bulk_insert")
    else:
        con.execute("RELEASE bulk_insert")
        return []
    con.execute("RELEASE bulk_insert")
    errors = []
    for index, (doc, row) in enumerate(zip(docs, rows, strict=True)):
        try:
            con.execute(sql, row)
        except sqlite3.IntegrityError:
            errors.append((index, _duplicate(info, doc)))
            if ordered:
                break
    return errors


def update(con, info, filter: Mapping, change: Mapping, upsert: bool, multi: bool,
           ) -> tuple[int, int, object]:
    """Apply an update (operators) or a replacement; returns (matched, modified,
    upserted _id or None)."""
    operators = updater.is_operator_update(change)
    if not operators and multi:
        raise WriteError("a replacement cannot update many documents", code=9)
    matched = modified = 0
    columns = info.columns
    tree = splice.changes(change) if operators else None
    keys_kept = tree is not None and not any(
        path.split(".")[0] in tree for path in columns)
    partial = splice.top_fields(filter) if tree is not None else None
    for rid, blob, doc in list(candidates(con, info, filter, limit=0 if multi else 1,
                                           partial=partial)):
        matched += 1
        encoded = splice.apply(blob, tree) if tree is not None else None
        if encoded is not None and keys_kept:
            if encoded != blob:
                modified += 1
                con.execute(f"UPDATE {quote(info.table)} SET doc = ? WHERE rid = ?",
                            (info.packer.pack(info.table, encoded), rid))
            continue
        if partial is not None:
            doc = decode(blob)
        if operators:
            new = updater.apply(doc, change)
        else:
            new = {"_id": doc["_id"], **{k: v for k, v in change.items() if k != "_id"}}
            if "_id" in change and not matcher.equal(change["_id"], doc["_id"]):
                raise WriteError("the _id field cannot be changed", code=66)
        encoded = bson.encode(new)
        if encoded == blob:
            continue
        modified += 1
        sets = ", ".join(["doc = ?", *(f"{quote(column_name(c))} = ?" for c in columns)])
        con.execute(f"UPDATE {quote(info.table)} SET {sets} WHERE rid = ?",
                    (info.packer.pack(info.table, encoded), *key_values(new, columns), rid))
    if matched or not upsert:
        return matched, modified, None
    if operators:
        doc = updater.upserted(filter, change, tree)
    else:
        seeded = updater.seed(filter)
        doc = {**({"_id": seeded["_id"]} if "_id" in seeded else {}), **change}
    with_id(doc)
    doc = {"_id": doc.pop("_id"), **doc}
    try:
        con.execute(_insert_sql(info), _row(info, doc))
    except sqlite3.IntegrityError:
        raise _duplicate(info, doc) from None
    info.packer.train(con, info.table)
    return 0, 0, doc["_id"]


def insert_new_upserts(con, info, requests: list) -> dict[int, object]:
    """The upserts of an unordered bulk write whose document does not exist yet, inserted in one
    statement; returns {request index: inserted _id}, the rest being left to
    :func:`update`. Only for a batch of upserts naming distinct ``_id``s (a recorder's
    flush: mostly new documents when a log runs forward in time), where inserting those
    first gives what applying the batch in order gives: a missing document matches no
    filter, so its upsert inserts, and no other request of the batch touches it. Any
    doubt (another shape, an update the general path would refuse, another unique
    index refusing a row) leaves everything to the general path."""
    ids = [r.filter.get("_id") for r in requests]
    if len(requests) < 2 or not all(
            r.kind == "update" and r.upsert and not r.multi and type(i) in (str, int)
            and updater.is_operator_update(r.document) for r, i in zip(requests, ids,
                                                                          strict=True)) \
            or len(set(ids)) < len(ids):
        return {}
    table = quote(info.table)
    present: set = set()
    for start in range(0, len(ids), 500):
        chunk = [keys.encode(i, "_id") for i in ids[start:start + 500]]
        present.update(row[0] for row in con.execute(
            f"SELECT {ID_COLUMN} FROM {table} WHERE {ID_COLUMN} IN "
            f"({','.join('?' * len(chunk))})", chunk))
    fresh, docs = {}, []
    try:
        for index, (request, doc_id) in enumerate(zip(requests, ids, strict=True)):
            if keys.encode(doc_id, "_id") in present:
                continue
            change = request.document
            doc = updater.upserted(request.filter, change, splice.changes(change))
            docs.append({"_id": doc.pop("_id"), **doc})
            fresh[index] = doc_id
    except (WriteError, keys.UnindexableValueError, TypeError, ValueError):
        return {}
    try:
        rows = _rows(info, docs)
    except (keys.UnindexableValueError, bson.InvalidDocument):
        return {}
    rows = info.packer.packed(con, info.table, rows)   # outside the savepoint: it may
    con.execute("SAVEPOINT new_upserts")                # store a dictionary
    try:
        con.executemany(_insert_sql(info), rows)
    except (sqlite3.IntegrityError, keys.UnindexableValueError, bson.InvalidDocument):
        con.execute("ROLLBACK TO new_upserts")
        con.execute("RELEASE new_upserts")
        return {}
    con.execute("RELEASE new_upserts")
    return fresh


def delete(con, info, filter: Mapping, multi: bool) -> int:
    where = planner.where(filter, info.column_set)
    table = quote(info.table)
    if where.exact:
        limit = "" if multi else " LIMIT 1"
        return con.execute(f"DELETE FROM {table} WHERE rid IN (SELECT rid FROM {table} "
                           f"WHERE {where.sql}{limit})", where.params).rowcount
    rids = [rid for rid, _, _ in candidates(con, info, filter, limit=0 if multi else 1)]
    for start in range(0, len(rids), 500):
        chunk = rids[start:start + 500]
        con.execute(f"DELETE FROM {table} WHERE rid IN ({','.join('?' * len(chunk))})", chunk)
    return len(rids)
