"""A collection's documents read from its SQLite table: find, count, distinct, aggregate.

Every read first asks the planner for the SQL condition of its filter; the rows it returns
are decoded, and checked by the matcher unless the condition was the whole filter (the
row layout: ``documents.py``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import bson
from pymongo.errors import OperationFailure

from . import keys, matcher, pipeline, planner, splice
from .keys import CODEC
from .planner import ID_COLUMN, column_name, quote

FETCH = 512


def decode(blob: bytes) -> dict:
    return bson.decode(blob, codec_options=CODEC)


def whole(info, doc: dict, address) -> dict:
    """The document of a row whose stored BSON decoded to ``doc`` (a keyed table's row
    stores its document without what its key holds: ``layouts``)."""
    if info.layout is None:
        return doc
    return info.layout.whole(doc, *address)


def candidates(con, info, filter: Mapping, limit: int = 0, order: str | None = None,
                skip: int = 0, partial: set[str] | None = None
                ) -> Iterator[tuple[object, bytes, dict]]:
    """(address, stored BSON, document) of each match, in ``order``; ``limit`` 0 = all.
    With ``partial``, the document holds only those top-level fields (enough to match).
    The address is the rid, or a keyed table's key (``catalog.Collection.address``)."""
    where = planner.where(filter, info.column_set)
    sql = f"SELECT {info.address}, doc FROM {quote(info.table)} WHERE {where.sql}"
    if order:
        sql += f" ORDER BY {order}"
    if where.exact and limit:
        sql += f" LIMIT {int(limit)} OFFSET {int(skip)}"
        skip = 0
    cursor = con.execute(sql, where.params)
    found = 0
    unpack, keyed = info.packer.unpack, info.layout
    try:
        while rows := cursor.fetchmany(FETCH):
            for row in rows:
                blob = unpack(con, row[-1])
                doc = decode(blob) if partial is None else splice.fields(blob, partial)
                address = row[0] if keyed is None else row[:-1]
                if keyed is not None:
                    doc = keyed.whole(doc, *address)
                if not where.exact and not matcher.matches(doc, filter):
                    continue
                if skip:
                    skip -= 1
                    continue
                yield address, blob, doc
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
    parts = None if sort or skip else planner.split_keyed_in(filter, columns)
    if parts is not None:
        found: list[dict] = []
        for part in parts:
            found += find(con, info, part, projection, limit=limit and limit - len(found))
            if limit and len(found) >= limit:
                break
        return found
    if sort:
        order = planner.order_by(sort, columns)
        if order is None:
            docs = [doc for _, _, doc in candidates(con, info, filter)]
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
    return [matcher.project(doc, projection) for _, _, doc in candidates(
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
        parts.append(f"SELECT * FROM (SELECT {info.address}, {keys_of_sort} FROM {table} "
                     f"WHERE {where.sql} ORDER BY {order} LIMIT {int(wanted)})")
        params += where.params
    addresses = [info.address_of(row) for row in con.execute(
        f"SELECT * FROM ({' UNION ALL '.join(parts)}) ORDER BY {order} "
        f"LIMIT {int(limit)} OFFSET {int(skip)}", params)]
    if not addresses:
        return []
    unpack = info.packer.unpack
    if info.layout is None:
        found = dict(con.execute(f"SELECT rid, doc FROM {table} WHERE rid IN "
                                 f"({','.join('?' * len(addresses))})", addresses).fetchall())
    else:
        found = {a: con.execute(f"SELECT doc FROM {table} WHERE {info.at_address}",
                                a).fetchone()[0] for a in addresses}
    return [matcher.project(whole(info, decode(unpack(con, found[a])), a), projection)
            for a in addresses]


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
    names = [*((ID_COLUMN,) if info.layout is None else (column_name(p) for p in
                                                            info.layout.paths)),
             *(column_name(f) for f in fields)]
    width = info.width if info.layout is not None else 1
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
        doc: dict = {}
        if with_key:
            doc["_id"] = keys.decode(row[0]) if info.layout is None else \
                info.layout.make_id(row[0], row[1], keys.decode(row[2]))
        for path, value in zip(fields, row[width:], strict=True):
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
    parts = planner.split_keyed_in(filter, info.column_set)
    if parts is not None:
        return sum(count(con, info, part) for part in parts)
    where = planner.where(filter, info.column_set)
    if where.exact:
        return con.execute(f"SELECT count(*) FROM {quote(info.table)} WHERE {where.sql}",
                           where.params).fetchone()[0]
    return sum(1 for _ in candidates(con, info, filter))


def distinct(con, info, key: str, filter: Mapping) -> list:
    if info is None:
        return []
    where = planner.where(filter, info.column_set)
    if where.exact and ((key == "_id" and info.layout is None) or key in info.column_set):
        rows = con.execute(f"SELECT DISTINCT {quote(column_name(key))} FROM "
                           f"{quote(info.table)} WHERE {where.sql}", where.params).fetchall()
        return [keys.decode(v) for v, in rows if v is not None]
    seen: dict = {}
    for _, _, doc in candidates(con, info, filter):
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
    docs = [doc for _, _, doc in candidates(con, info, match)]
    return pipeline.run(docs, rest)
