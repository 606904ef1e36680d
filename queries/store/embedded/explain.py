"""What the Data page asks a store: ``$collStats`` figures and ``explain`` of a find or
count, answered as a MongoDB server answers, plus SQLite's own plan."""

from __future__ import annotations

from collections.abc import Mapping

from pymongo.errors import OperationFailure

from . import layouts, pipeline, planner
from .planner import quote
from .reading import count, find

SIZE_SAMPLE = 200


def coll_stats(con, info, stages: list[Mapping]) -> list[dict]:
    """``$collStats``' storage figures: the exact count, and the BSON size
    (``size``) and stored size (``storageSize``, compressed) estimated from a sample of
    documents (reading every document would cost a full scan)."""
    if info is None:
        return []
    table = quote(info.table)
    total = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    sample = _spread(con, table) if info.layout is None else [doc for doc, in con.execute(
        f"SELECT doc FROM {table} LIMIT {SIZE_SAMPLE}")]
    bson_bytes = sum(len(info.packer.unpack(con, doc)) for doc in sample)
    stored_bytes = sum(map(len, sample))
    per = total / len(sample) if sample else 0
    return pipeline.run([{"ns": f"{info.db}.{info.name}", "storageStats": {
        "count": total, "size": round(bson_bytes * per),
        "storageSize": round(stored_bytes * per),
        "sizeEstimated": total > SIZE_SAMPLE}}], stages[1:])


def _spread(con, table: str) -> list[bytes]:
    """Up to ``SIZE_SAMPLE`` stored documents spread over the table (its first rows
    alone were written before the collection had a dictionary)."""
    low, high = con.execute(f"SELECT min(rid), max(rid) FROM {table}").fetchone()
    if low is None:
        return []
    rids = list(range(low, high + 1, max(1, (high - low + 1) // SIZE_SAMPLE)))[:SIZE_SAMPLE]
    spread = [doc for doc, in con.execute(
        f"SELECT doc FROM {table} WHERE rid IN ({','.join('?' * len(rids))})", rids)]
    return spread or [doc for doc, in con.execute(   # deleted rows left only gaps there
        f"SELECT doc FROM {table} LIMIT {SIZE_SAMPLE}")]


def explain(con, info, command: Mapping) -> dict:
    """MongoDB's ``explain`` (executionStats) of a find or count, with SQLite's own plan
    (``queryPlanner.sqlitePlan``): which index answers, rows examined, rows returned."""
    if "find" in command:
        filter, sort, limit = (command.get("filter") or {}, command.get("sort"),
                               command.get("limit", 0))
    elif "count" in command:
        filter, sort, limit = command.get("query") or {}, None, 0
    else:
        raise OperationFailure("explain: only find and count are explained here", code=2)
    if info is None:
        return {"ok": 1.0, "queryPlanner": {"winningPlan": {"stage": "EOF"}, "sqlitePlan": []},
                "executionStats": {"nReturned": 0, "totalKeysExamined": 0,
                                   "totalDocsExamined": 0}}
    sort = list(sort.items()) if isinstance(sort, Mapping) else sort
    where = planner.where(filter, info.column_set)
    order = planner.order_by(sort, info.column_set) if sort else None
    sql = f"SELECT {info.address}, doc FROM {quote(info.table)} WHERE {where.sql}"
    if order:
        sql += f" ORDER BY {order}"
    if limit and where.exact and (order or not sort):
        sql += f" LIMIT {int(limit)}"
    steps = [row[3] for row in con.execute("EXPLAIN QUERY PLAN " + sql, where.params)]
    indexes = sorted({_index_name(info, step) for step in steps} - {None})
    examined = con.execute(f"SELECT count(*) FROM ({sql})", where.params).fetchone()[0]
    returned = (len(find(con, info, filter, {"_id": 1}, sort, 0, limit)) if "find" in command
                else count(con, info, filter))
    stage = ({"stage": "FETCH", "inputStage": {"stage": "IXSCAN", "indexName": indexes[0]}}
             if len(indexes) == 1 else
             {"stage": "OR", "inputStages": [{"stage": "IXSCAN", "indexName": n}
                                             for n in indexes]} if indexes
             else {"stage": "COLLSCAN"})
    return {"ok": 1.0, "queryPlanner": {"winningPlan": stage, "sqlitePlan": steps},
            "executionStats": {"nReturned": returned, "totalKeysExamined":
                               examined if indexes else 0, "totalDocsExamined": examined}}


def _index_name(info, step: str) -> str | None:
    """The index a step of SQLite's plan uses, by its MongoDB name."""
    marker = "INDEX "
    if "USING INTEGER PRIMARY KEY" in step:
        return None
    if info.layout is not None and "USING PRIMARY KEY" in step:
        named = [n for n, spec in info.indexes.items()
                 if layouts.is_key(info.layout, spec["key"])]
        return named[0] if named else "_id_"
    if marker not in step:
        return None
    name = step.split(marker, 1)[1].split(" ")[0].strip('"')
    if name.startswith("sqlite_autoindex_"):
        return "_id_"
    prefix = info.table + "/"
    return name[len(prefix):] if name.startswith(prefix) else name
