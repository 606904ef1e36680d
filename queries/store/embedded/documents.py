"""A collection's documents in its SQLite table: insert, update, delete, find, aggregate.

A row is ``(rid, id, doc, k:<field>...)``: ``id`` the key of ``_id`` (unique), ``doc`` the
whole document as BSON, and one key column per indexed field (``keys.py``). Every
operation first asks the planner for the SQL condition of its filter; rows it returns
are decoded, and checked by the matcher unless the condition was the whole filter. Writes
run inside the store's write transaction, so a read-modify-write is atomic against every
other thread and process.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Iterator, Mapping
from functools import lru_cache

import bson
from bson import ObjectId
from pymongo.errors import DuplicateKeyError, OperationFailure, WriteError

from ...errors import DUPLICATE_KEY
from . import keys, matcher, pipeline, planner, splice, updater
from .keys import CODEC
from .planner import ID_COLUMN, column_name, quote

FETCH = 512


def decode(blob: bytes) -> dict:
    return bson.decode(blob, codec_options=CODEC)


def key_values(doc: Mapping, paths: list[str]) -> list:
    encode = keys.encode
    return [encode(doc.get(path) if "." not in path else matcher.get(doc, path), path)
            for path in paths]


def _row(info, doc: Mapping) -> tuple:
    if "_id" not in doc:
        raise WriteError("a document needs an _id", code=2)
    return (keys.encode(doc["_id"], "_id"), bson.encode(doc), *key_values(doc, info.columns))


def _rows(info, docs: list[dict]) -> list[tuple]:
    """``_row`` of each document (given an ``_id`` if it has none), inlined for bulk
    inserts: strings, numbers and nulls are their own keys, and each distinct date is
    encoded once per call (a batch's documents share their ``ingested`` stamp, and log
    lines their seconds)."""
    columns = [(path, "." in path) for path in info.columns]
    encode, to_bson, get = keys.encode, bson.encode, matcher.get
    dates: dict = {}
    rows = []
    for doc in docs:
        if "_id" not in doc:
            doc["_id"] = ObjectId()
        row = [encode(doc["_id"], "_id"), to_bson(doc)]
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
    for rid, blob, doc in list(_candidates(con, info, filter, limit=0 if multi else 1,
                                           partial=partial)):
        matched += 1
        encoded = splice.apply(blob, tree) if tree is not None else None
        if encoded is not None and keys_kept:
            if encoded != blob:
                modified += 1
                con.execute(f"UPDATE {quote(info.table)} SET doc = ? WHERE rid = ?",
                            (encoded, rid))
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
                    (encoded, *key_values(new, columns), rid))
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
    con.execute("SAVEPOINT new_upserts")
    try:
        con.executemany(_insert_sql(info), _rows(info, docs))
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
    rids = [rid for rid, _, _ in _candidates(con, info, filter, limit=0 if multi else 1)]
    for start in range(0, len(rids), 500):
        chunk = rids[start:start + 500]
        con.execute(f"DELETE FROM {table} WHERE rid IN ({','.join('?' * len(chunk))})", chunk)
    return len(rids)


# -- reads -------------------------------------------------------------------------------
def _candidates(con, info, filter: Mapping, limit: int = 0, order: str | None = None,
                skip: int = 0, partial: set[str] | None = None
                ) -> Iterator[tuple[int, bytes, dict]]:
    """(rid, blob, document) of each match, in ``order``; ``limit`` 0 = all. With
    ``partial``, the document holds only those top-level fields (enough to match)."""
    where = planner.where(filter, info.column_set)
    sql = f"SELECT rid, doc FROM {quote(info.table)} WHERE {where.sql}"
    if order:
        sql += f" ORDER BY {order}"
    if where.exact and limit:
        sql += f" LIMIT {int(limit)} OFFSET {int(skip)}"
        skip = 0
    cursor = con.execute(sql, where.params)
    found = 0
    try:
        while rows := cursor.fetchmany(FETCH):
            for rid, blob in rows:
                doc = decode(blob) if partial is None else splice.fields(blob, partial)
                if not where.exact and not matcher.matches(doc, filter):
                    continue
                if skip:
                    skip -= 1
                    continue
                yield rid, blob, doc
                found += 1
                if limit and found >= limit:
                    return
    finally:
        cursor.close()


def find(con, info, filter: Mapping, projection=None, sort=None, skip: int = 0,
         limit: int = 0) -> list[dict]:
    if info is None:
        return []
    columns = info.column_set
    if sort:
        order = planner.order_by(sort, columns)
        if order is None:
            docs = [doc for _, _, doc in _candidates(con, info, filter)]
            docs = _python_sort(docs, sort)
            docs = docs[skip:skip + limit] if limit else docs[skip:]
            return [matcher.project(d, projection) for d in docs]
        split = planner.split_in(filter, columns) if limit else None
        if split is not None and planner.where(filter, columns).exact:
            return _merged(con, info, filter, split, sort, order, projection, skip, limit)
    else:
        order = None
    quick = _key_only(con, info, filter, projection, order, skip, limit)
    if quick is not None:
        return quick
    return [matcher.project(doc, projection) for _, _, doc in _candidates(
        con, info, filter, limit, order, skip, partial=_decoded_fields(filter, projection))]


def _decoded_fields(filter: Mapping, projection) -> set[str] | None:
    """The top-level fields an inclusion projection (plus the filter) needs: the rest of
    each document is skipped undecoded (a daily document's 1,440 minute counters when a
    chart asks for ``hourly``). None: decode everything."""
    if not isinstance(projection, Mapping) or not projection:
        return None
    wanted = {path.split(".")[0] for path, on in projection.items()
              if on and not isinstance(on, Mapping) and path != "_id"}
    if not wanted or any(isinstance(on, Mapping) or (not on and path != "_id")
                         for path, on in projection.items()):
        return None
    return wanted | {"_id"} | splice.top_fields(filter)


def _merged(con, info, filter, split, sort, order, projection, skip, limit) -> list[dict]:
    """One ordered, limited subquery per ``$in`` value, merged by SQLite (``UNION ALL``
    under the same order): each reads only its own top index entries, and only the
    documents finally returned are read and decoded."""
    field, values = split
    wanted = skip + limit
    table = quote(info.table)
    keys_of_sort = ", ".join(quote(column_name(f)) for f, _ in sort)
    parts, params = [], []
    for value in dict.fromkeys(keys.encode(v, field) if v is not None else None
                               for v in values):
        where = planner.where({**filter, field: keys.decode(value)}, info.column_set)
        parts.append(f"SELECT * FROM (SELECT rid, {keys_of_sort} FROM {table} "
                     f"WHERE {where.sql} ORDER BY {order} LIMIT {int(wanted)})")
        params += where.params
    rids = [rid for rid, *_ in con.execute(
        f"SELECT * FROM ({' UNION ALL '.join(parts)}) ORDER BY {order} "
        f"LIMIT {int(limit)} OFFSET {int(skip)}", params)]
    if not rids:
        return []
    found = dict(con.execute(f"SELECT rid, doc FROM {table} WHERE rid IN "
                             f"({','.join('?' * len(rids))})", rids).fetchall())
    return [matcher.project(decode(found[rid]), projection) for rid in rids]


def _key_only(con, info, filter, projection, order, skip, limit) -> list[dict] | None:
    """Documents built from key columns alone, when the projection asks only for them
    and the filter is exact: no document is read or decoded."""
    if not projection or not isinstance(projection, Mapping):
        return None
    fields = [f for f, on in projection.items() if on and f != "_id"]
    with_key = projection.get("_id", 1)
    if not (fields or with_key) or any(not on for f, on in projection.items() if f != "_id") \
            or any(f not in info.column_set for f in fields):
        return None
    where = planner.where(filter, info.column_set)
    if not where.exact:
        return None
    names = [ID_COLUMN, *(column_name(f) for f in fields)]
    sql = (f"SELECT {', '.join(quote(n) for n in names)} FROM {quote(info.table)} "
           f"WHERE {where.sql}")
    if order:
        sql += f" ORDER BY {order}"
    if limit:
        sql += f" LIMIT {int(limit)} OFFSET {int(skip)}"
    elif skip:
        sql += f" LIMIT -1 OFFSET {int(skip)}"
    out = []
    for row in con.execute(sql, where.params).fetchall():
        doc: dict = {"_id": keys.decode(row[0])} if with_key else {}
        for path, value in zip(fields, row[1:], strict=True):
            if value is not None:
                _put(doc, path, keys.decode(value))
        out.append(doc)
    return out


def _put(doc: dict, path: str, value) -> None:
    *parents, last = path.split(".")
    for part in parents:
        doc = doc.setdefault(part, {})
    doc[last] = value


def _python_sort(docs: list[dict], sort) -> list[dict]:
    for field, direction in reversed(sort):
        docs = sorted(docs, key=lambda d, f=field: matcher.sort_key(matcher.get(d, f)),
                      reverse=direction == -1)
    return docs


def count(con, info, filter: Mapping) -> int:
    if info is None:
        return 0
    where = planner.where(filter, info.column_set)
    if where.exact:
        return con.execute(f"SELECT count(*) FROM {quote(info.table)} WHERE {where.sql}",
                           where.params).fetchone()[0]
    return sum(1 for _ in _candidates(con, info, filter))


def distinct(con, info, key: str, filter: Mapping) -> list:
    if info is None:
        return []
    where = planner.where(filter, info.column_set)
    if where.exact and (key == "_id" or key in info.column_set):
        rows = con.execute(f"SELECT DISTINCT {quote(column_name(key))} FROM "
                           f"{quote(info.table)} WHERE {where.sql}", where.params).fetchall()
        return [keys.decode(v) for v, in rows if v is not None]
    seen: dict = {}
    for _, _, doc in _candidates(con, info, filter):
        for value in matcher.values_at(doc, key):
            for item in value if isinstance(value, list) else [value]:
                seen.setdefault(matcher.sort_key(item), item)
    return list(seen.values())


def aggregate(con, info, stages: list[Mapping]) -> list[dict]:
    if any(not isinstance(s, Mapping) or len(s) != 1 for s in stages):
        raise OperationFailure("a pipeline stage holds exactly one field", code=40323)
    if info is None:
        return pipeline.run([], stages)
    match = stages[0]["$match"] if stages and "$match" in stages[0] else {}
    rest = stages[1:] if stages and "$match" in stages[0] else stages
    where = planner.where(match, info.column_set)
    if rest and "$group" in rest[0] and where.exact:
        plan = planner.group_sql(rest[0]["$group"], info.column_set)
        if plan is not None:
            if not plan.selects:
                plan.selects.append("NULL")
            selects = plan.selects
            groups = ", ".join(str(i + 1) for i in range(len(selects)))
            sql = (f"SELECT {', '.join(selects + [a for _, a in plan.accumulators.values()])} "
                   f"FROM {quote(info.table)} WHERE {where.sql} GROUP BY {groups}")
            return pipeline.run(plan.rows(con.execute(sql, where.params).fetchall()), rest[1:])
    docs = [doc for _, _, doc in _candidates(con, info, match)]
    return pipeline.run(docs, rest)
