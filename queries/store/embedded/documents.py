"""A collection's documents in its SQLite table: insert, update and delete (reads are in
``reading.py``).

A row is ``(rid, id, doc, k:<field>...)``: ``id`` the key of ``_id`` (unique), ``doc`` the
whole document as BSON, compressed once its collection has a dictionary (``packing.py``),
and one key column per indexed field (``keys.py``). The counter collections' rows are
keyed instead (``layouts.py``): ``(k:metadata.site, k:metadata.page, k:metadata.date, doc)``
``WITHOUT ROWID``, addressed by that key where others are by ``rid``. Every
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
from .reading import candidates, decode, whole


def key_values(doc: Mapping, paths: list[str]) -> list:
    encode = keys.encode
    return [encode(doc.get(path) if "." not in path else matcher.get(doc, path), path)
            for path in paths]


def _row(info, doc: Mapping) -> tuple:
    if "_id" not in doc:
        raise WriteError("a document needs an _id", code=2)
    if info.layout is not None:
        return _keyed_rows(info, [doc])[0]
    return (keys.encode(doc["_id"], "_id"), info.packer.pack(info.table, bson.encode(doc)),
            *key_values(doc, info.columns))


def _keyed_rows(info, docs: list[Mapping], found: list | None = None) -> list[tuple]:
    """Rows ``(doc, key..., other columns...)`` of a keyed table (``layouts``);
    ``found``: the keys of their ``_id``s, if known."""
    layout, pack, table, to_bson = info.layout, info.packer.pack, info.table, bson.encode
    others = info.columns[len(layout.paths):]
    return [(pack(table, to_bson(layout.body(doc))), *layout.key(doc, key),
             *key_values(doc, others))
            for doc, key in zip(docs, found or [None] * len(docs), strict=True)]


def stored_bson(info, doc: Mapping) -> bytes:
    """The BSON a row stores of ``doc``."""
    if info.layout is None:
        return bson.encode(doc)
    info.layout.key(doc)
    return bson.encode(info.layout.body(doc))


def _rows(info, docs: list[dict]) -> list[tuple]:
    """``_row`` of each document (given an ``_id`` if it has none), inlined for bulk
    inserts: strings, numbers and nulls are their own keys, and each distinct date is
    encoded once per call (a batch's documents share their ``ingested`` stamp, and log
    lines their seconds)."""
    if info.layout is not None:
        for doc in docs:
            with_id(doc)
        return _keyed_rows(info, docs)
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
    return _insert_statement(info.table, tuple(info.columns), info.layout is not None)


@lru_cache(maxsize=256)
def _insert_statement(table: str, columns: tuple[str, ...], keyed: bool = False) -> str:
    """The INSERT of a row into ``table`` (one per upsert that inserts: built once)."""
    names = ["doc" if keyed else ID_COLUMN, *(() if keyed else ("doc",)),
             *(column_name(c) for c in columns)]
    return (f"INSERT INTO {quote(table)} ({', '.join(quote(n) for n in names)}) "
            f"VALUES ({', '.join('?' * len(names))})")


def _duplicate(info, doc: Mapping) -> DuplicateKeyError:
    return DuplicateKeyError(
        f"E11000 duplicate key error collection: {info.db}.{info.name} dup key: "
        f"{{ _id: {doc.get('_id')!r} }}", DUPLICATE_KEY, {"keyValue": {"_id": doc.get("_id")}})


def _doc_at(info) -> int:
    return 1 if info.layout is None else 0


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
    rows = info.packer.packed(con, info.table, rows, _doc_at(info))
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
    at = info.at_address
    for address, blob, doc in list(candidates(con, info, filter, limit=0 if multi else 1,
                                               partial=partial)):
        matched += 1
        encoded = splice.apply(blob, tree) if tree is not None else None
        if encoded is not None and keys_kept:
            if encoded != blob:
                modified += 1
                con.execute(f"UPDATE {quote(info.table)} SET doc = ? WHERE {at}",
                            (info.packer.pack(info.table, encoded),
                             *info.address_params(address)))
            continue
        if partial is not None:
            doc = whole(info, decode(blob), address)
        if operators:
            new = updater.apply(doc, change)
        else:
            new = {"_id": doc["_id"], **{k: v for k, v in change.items() if k != "_id"}}
            if "_id" in change and not matcher.equal(change["_id"], doc["_id"]):
                raise WriteError("the _id field cannot be changed", code=66)
        encoded = stored_bson(info, new)
        if encoded == blob:
            continue
        modified += 1
        sets = ", ".join(["doc = ?", *(f"{quote(column_name(c))} = ?" for c in columns)])
        con.execute(f"UPDATE {quote(info.table)} SET {sets} WHERE {at}",
                    (info.packer.pack(info.table, encoded), *key_values(new, columns),
                     *info.address_params(address)))
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
    found = [keys.encode(i, "_id") for i in ids] if info.layout is None \
        else [info.layout.key_of_id(i) for i in ids]
    if None in found:
        return {}
    present = _present(con, info, found)
    fresh, docs, new_keys = {}, [], []
    try:
        for index, (request, doc_id) in enumerate(zip(requests, ids, strict=True)):
            if found[index] in present:
                continue
            new_keys.append(found[index])
            change = request.document
            doc = updater.upserted(request.filter, change, splice.changes(change))
            docs.append({"_id": doc.pop("_id"), **doc})
            fresh[index] = doc_id
    except (WriteError, keys.UnindexableValueError, TypeError, ValueError):
        return {}
    try:
        rows = _rows(info, docs) if info.layout is None else _keyed_rows(info, docs, new_keys)
    except (WriteError, bson.InvalidDocument):
        return {}
    rows = info.packer.packed(con, info.table, rows, _doc_at(info))  # outside the savepoint:
    con.execute("SAVEPOINT new_upserts")                # it may store a dictionary
    try:
        con.executemany(_insert_sql(info), rows)
    except (sqlite3.IntegrityError, keys.UnindexableValueError, bson.InvalidDocument):
        con.execute("ROLLBACK TO new_upserts")
        con.execute("RELEASE new_upserts")
        return {}
    con.execute("RELEASE new_upserts")
    return fresh


def _present(con, info, found: list) -> set:
    """Those of ``found`` (keys of ``_id``, or of a keyed table) that are stored."""
    table = quote(info.table)
    present: set = set()
    if info.layout is not None:
        one = f"({', '.join('?' * info.width)})"
        on = " AND ".join(f"t.{quote(column_name(p))} = v.column{i + 1}"
                          for i, p in enumerate(info.layout.paths))
        for start in range(0, len(found), 300):
            chunk = found[start:start + 300]
            present.update(tuple(row) for row in con.execute(
                f"SELECT {', '.join('t.' + quote(column_name(p)) for p in info.layout.paths)}"
                f" FROM (VALUES {', '.join([one] * len(chunk))}) AS v JOIN {table} AS t "
                f"ON {on}", [v for k in chunk for v in k]))
        return present
    for start in range(0, len(found), 500):
        chunk = found[start:start + 500]
        present.update(row[0] for row in con.execute(
            f"SELECT {ID_COLUMN} FROM {table} WHERE {ID_COLUMN} IN "
            f"({','.join('?' * len(chunk))})", chunk))
    return present


def delete(con, info, filter: Mapping, multi: bool) -> int:
    where = planner.where(filter, info.column_set)
    table = quote(info.table)
    if where.exact:
        limit = "" if multi else " LIMIT 1"
        return con.execute(f"DELETE FROM {table} WHERE ({info.address}) IN (SELECT "
                           f"{info.address} FROM {table} WHERE {where.sql}{limit})",
                           where.params).rowcount
    found = [a for a, _, _ in candidates(con, info, filter, limit=0 if multi else 1)]
    if info.layout is not None:
        con.executemany(f"DELETE FROM {table} WHERE {info.at_address}", found)
        return len(found)
    for start in range(0, len(found), 500):
        chunk = found[start:start + 500]
        con.execute(f"DELETE FROM {table} WHERE rid IN ({','.join('?' * len(chunk))})", chunk)
    return len(found)
