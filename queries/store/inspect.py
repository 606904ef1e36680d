"""What the store holds and how it answers: collection sizes, indexes, query plans.

A store explains a query (``explain`` with ``executionStats``): which index it used and
how many keys and documents it examined for those it returned. The embedded store answers
the same command, adding SQLite's own plan of the query (``queryPlanner.sqlitePlan``).
"""

from __future__ import annotations

from dataclasses import dataclass

from pymongo.errors import OperationFailure


@dataclass(frozen=True)
class CollectionInfo:
    name: str
    count: int
    size_bytes: int
    size_is_estimate: bool
    stored_bytes: int | None   # on disk, compressed (MongoDB's storageSize); None: unknown
    indexes: tuple[tuple[str, tuple[tuple[str, object], ...]], ...]  # (name, keys)
    ttl_seconds: int | None


@dataclass(frozen=True)
class Plan:
    """One query's explain summary; ``reason`` says why there are no figures."""

    indexes: tuple[str, ...] = ()
    keys_examined: int | None = None
    docs_examined: int | None = None
    returned: int | None = None
    reason: str | None = None
    detail: tuple[str, ...] = ()  # the embedded store's SQLite plan, step by step

    @property
    def stage(self) -> str:
        return ", ".join(self.indexes) if self.indexes else "COLLSCAN"


def collections(db) -> list[CollectionInfo]:
    """Every collection, by name: documents, data size (BSON), size stored, indexes, TTL."""
    return [collection_info(db, name) for name in sorted(db.list_collection_names())]


def collection_info(db, name: str) -> CollectionInfo:
    coll = db[name]
    info = coll.index_information()
    indexes = tuple((index, tuple(tuple(pair) for pair in spec["key"]))
                    for index, spec in sorted(info.items()))
    ttl = next((int(spec["expireAfterSeconds"]) for spec in info.values()
                if "expireAfterSeconds" in spec), None)
    stats = next(coll.aggregate([{"$collStats": {"storageStats": {}}}]), {})
    storage = stats.get("storageStats", {})
    stored = storage.get("storageSize")
    return CollectionInfo(name, int(storage.get("count", coll.estimated_document_count())),
                          int(storage.get("size", 0)), bool(storage.get("sizeEstimated")),
                          None if stored is None else int(stored), indexes, ttl)


def explain_find(db, collection: str, filter: dict, sort=None, limit: int = 0,
                 projection: dict | None = None) -> Plan:
    """The plan of ``find(filter).sort(sort).limit(limit)``."""
    command = {"find": collection, "filter": filter}
    if sort:
        command["sort"] = dict(sort)
    if limit:
        command["limit"] = limit
    if projection:
        command["projection"] = projection
    return _explain(db, command)


def explain_count(db, collection: str, filter: dict) -> Plan:
    return _explain(db, {"count": collection, "query": filter})


def _explain(db, command: dict) -> Plan:
    try:
        result = db.command("explain", command, verbosity="executionStats")
    except OperationFailure as exc:
        return Plan(reason=f"explain failed: {exc.details.get('errmsg', exc)}")
    stats = result.get("executionStats")
    if stats is None:
        return Plan(reason="this server's explain() reports no executionStats "
                    f"(it answered with {', '.join(sorted(result)[:6])}, ...)")
    return Plan(
        indexes=tuple(sorted(set(_index_names(result.get("queryPlanner", {}))))),
        keys_examined=stats.get("totalKeysExamined"),
        docs_examined=stats.get("totalDocsExamined"),
        returned=stats.get("nReturned"),
        detail=tuple(result.get("queryPlanner", {}).get("sqlitePlan", ())),
    )


def _index_names(plan) -> list[str]:
    """Every ``indexName`` in a (possibly sharded, possibly nested) winning plan."""
    if isinstance(plan, dict):
        names = [plan["indexName"]] if "indexName" in plan else []
        for key, value in plan.items():
            if key != "rejectedPlans":
                names.extend(_index_names(value))
        return names
    if isinstance(plan, list):
        return [name for item in plan for name in _index_names(item)]
    return []


# -- the dashboard's chart queries, recorded as they run, then explained ------------------
@dataclass(frozen=True)
class QueryPlan:
    chart: str
    collection: str
    filter: dict
    plan: Plan


class _Recorder:
    """A database stand-in that runs each read on ``db`` and notes it for explain."""

    def __init__(self, db):
        self._db = db
        self.client = db.client
        self.name = db.name
        self.reads: list[tuple[str, str, dict, dict]] = []

    def __getitem__(self, name: str):
        return _RecordingCollection(self, self._db[name])


class _RecordingCollection:
    def __init__(self, recorder: _Recorder, collection):
        self._recorder, self._collection = recorder, collection

    def find(self, filter=None, projection=None, **kwargs):
        options = {k: kwargs[k] for k in ("sort", "limit") if kwargs.get(k)}
        self._recorder.reads.append(("find", self._collection.name, filter or {},
                                     {**options, "projection": projection}))
        return self._collection.find(filter, projection, **kwargs)

    def count_documents(self, filter, **kwargs):
        self._recorder.reads.append(("count", self._collection.name, filter, {}))
        return self._collection.count_documents(filter, **kwargs)

    def __getattr__(self, name: str):
        return getattr(self._collection, name)


def record_reads(db, read, *args, **kwargs) -> list[tuple[str, str, dict, dict]]:
    """The finds and counts ``read(db, *args, **kwargs)`` issues: (kind, collection,
    filter, options)."""
    recorder = _Recorder(db)
    read(recorder, *args, **kwargs)
    return recorder.reads


def explain_reads(db, chart: str, read, *args, **kwargs) -> list[QueryPlan]:
    """Run a chart's read function once and explain every query it made."""
    plans = []
    for kind, collection, filter, options in record_reads(db, read, *args, **kwargs):
        if kind == "count":
            plan = explain_count(db, collection, filter)
        else:
            plan = explain_find(db, collection, filter, options.get("sort"),
                                options.get("limit", 0), options.get("projection"))
        plans.append(QueryPlan(chart, collection, filter, plan))
    return plans
