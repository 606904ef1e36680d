"""MongoDB aggregation stages and expressions, evaluated in Python on decoded documents.

Used for what the SQL push-down (``planner.group_sql``) does not cover: stages
``$match``, ``$group``, ``$project``, ``$addFields``/``$set``, ``$sort``, ``$skip``, ``$limit``,
``$count``, ``$unwind``; accumulators ``$sum``, ``$avg``, ``$min``, ``$max``, ``$first``,
``$last``, ``$push``, ``$addToSet``; and the expression operators listed in ``_OPERATORS``.
Date parts are UTC, as MongoDB's are without a ``timezone``. Unknown stages and operators
are refused with ``OperationFailure``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping

from pymongo.errors import OperationFailure

from . import matcher

_MISSING = object()


def run(docs: Iterable[dict], stages: list[Mapping]) -> list[dict]:
    rows = list(docs)
    for stage in stages:
        if len(stage) != 1:
            raise OperationFailure("a pipeline stage holds exactly one field", code=40323)
        (name, spec), = stage.items()
        handler = _STAGES.get(name)
        if handler is None:
            raise OperationFailure(f"unsupported aggregation stage {name}", code=40324)
        rows = handler(rows, spec)
    return rows


def _match(rows, spec):
    return [row for row in rows if matcher.matches(row, spec)]


def _sort(rows, spec):
    for field, direction in reversed(list(spec.items())):
        rows = sorted(rows, key=lambda r, f=field: matcher.sort_key(matcher.get(r, f)),
                      reverse=direction == -1)
    return rows


def _project(rows, spec):
    computed = {k: v for k, v in spec.items() if not _is_flag(v)}
    flags = {k: v for k, v in spec.items() if _is_flag(v)}
    excluding = not computed and any(not v for k, v in flags.items() if k != "_id")
    if excluding:
        return [matcher.project(row, flags) for row in rows]
    kept = {k: v for k, v in flags.items() if v or k == "_id"} or {"_id": 1}
    out = []
    for row in rows:
        new = matcher.project(row, kept)
        for key, expr in computed.items():
            value = evaluate(expr, row)
            if value is not _MISSING:
                new[key] = value
        out.append(new)
    return out


def _is_flag(value) -> bool:
    return isinstance(value, bool) or (type(value) is int and value in (0, 1))


def _add_fields(rows, spec):
    out = []
    for row in rows:
        new = dict(row)
        for key, expr in spec.items():
            new[key] = evaluate(expr, row)
        out.append(new)
    return out


def _group(rows, spec):
    if "_id" not in spec:
        raise OperationFailure("a $group specification must include an _id", code=15955)
    accumulators = {k: v for k, v in spec.items() if k != "_id"}
    groups: dict = {}
    for row in rows:
        key_value = evaluate(spec["_id"], row)
        key_value = None if key_value is _MISSING else key_value
        key = matcher.sort_key(key_value)
        state = groups.get(key)
        if state is None:
            state = groups[key] = {"_id": key_value, **{k: _Accumulator(v)
                                                         for k, v in accumulators.items()}}
        for name in accumulators:
            state[name].add(row)
    return [{k: (v.result() if isinstance(v, _Accumulator) else v) for k, v in g.items()}
            for g in groups.values()]


class _Accumulator:
    def __init__(self, spec):
        if not isinstance(spec, Mapping) or len(spec) != 1:
            raise OperationFailure(f"invalid accumulator {spec!r}", code=40234)
        (self.op, self.expr), = spec.items()
        if self.op not in ("$sum", "$avg", "$min", "$max", "$first", "$last", "$push",
                           "$addToSet"):
            raise OperationFailure(f"unknown group operator {self.op}", code=15952)
        self.values: list = []

    def add(self, row) -> None:
        value = evaluate(self.expr, row)
        if self.op in ("$sum", "$avg") and matcher.rank(value) != 2:
            return
        if value is _MISSING and self.op not in ("$first", "$last"):
            return
        self.values.append(None if value is _MISSING else value)

    def result(self):
        values = self.values
        if self.op == "$sum":
            return sum(v for v in values if not isinstance(v, bool))
        if self.op == "$avg":
            numbers = [v for v in values if matcher.rank(v) == 2]
            return sum(numbers) / len(numbers) if numbers else None
        present = [v for v in values if v is not None]
        if self.op == "$min":
            return min(present, key=matcher.sort_key, default=None)
        if self.op == "$max":
            return max(present, key=matcher.sort_key, default=None)
        if self.op == "$first":
            return values[0] if values else None
        if self.op == "$last":
            return values[-1] if values else None
        if self.op == "$push":
            return values
        unique: dict = {}
        for value in values:
            unique.setdefault(matcher.sort_key(value), value)
        return list(unique.values())


def _limit(rows, n):
    return rows[:int(n)]


def _skip(rows, n):
    return rows[int(n):]


def _count(rows, name):
    return [{name: len(rows)}] if rows else []


def _unwind(rows, spec):
    path = spec["path"] if isinstance(spec, Mapping) else spec
    field = path[1:]
    out = []
    for row in rows:
        value = matcher.get(row, field, _MISSING)
        if isinstance(value, list):
            for item in value:
                new = dict(row)
                new[field] = item
                out.append(new)
        elif value is not _MISSING and value is not None:
            out.append(row)
    return out


_STAGES = {"$match": _match, "$group": _group, "$project": _project, "$sort": _sort,
           "$limit": _limit, "$skip": _skip, "$count": _count, "$unwind": _unwind,
           "$addFields": _add_fields, "$set": _add_fields}


# -- expressions ---------------------------------------------------------------------------
def evaluate(expr, row):
    if type(expr) is str and expr[:1] == "$" and expr[1:2] != "$":
        return matcher.get(row, expr[1:], _MISSING)
    if isinstance(expr, str):
        if expr.startswith("$$"):
            raise OperationFailure(f"variables are not supported: {expr}", code=17276)
        if expr.startswith("$"):
            return matcher.get(row, expr[1:], _MISSING)
        return expr
    if isinstance(expr, list):
        return [evaluate(e, row) for e in expr]
    if isinstance(expr, Mapping):
        if len(expr) == 1:
            (op, arg), = expr.items()
            if isinstance(op, str) and op.startswith("$"):
                return _operator(op, arg, row)
        return {k: _present(evaluate(v, row)) for k, v in expr.items()}
    return expr


def _present(value):
    return None if value is _MISSING else value


def _args(arg, row) -> list:
    values = arg if isinstance(arg, list) else [arg]
    return [_present(evaluate(v, row)) for v in values]


def date_part(op: str, value):
    if not isinstance(value, dt.datetime):
        raise OperationFailure(f"{op} needs a date, got {type(value).__name__}", code=16006)
    value = value.astimezone(dt.UTC) if value.tzinfo else value
    return {"$year": value.year, "$month": value.month, "$dayOfMonth": value.day,
            "$hour": value.hour, "$minute": value.minute, "$second": value.second,
            "$dayOfWeek": value.isoweekday() % 7 + 1,
            "$dayOfYear": value.timetuple().tm_yday}[op]


DATE_PARTS = ("$year", "$month", "$dayOfMonth", "$hour", "$minute", "$second",
              "$dayOfWeek", "$dayOfYear")


def _operator(op: str, arg, row):
    if op == "$literal":
        return arg
    if op in DATE_PARTS:
        value = _args(arg["date"] if isinstance(arg, Mapping) else arg, row)[0]
        return None if value is None else date_part(op, value)
    if op == "$cond":
        if isinstance(arg, Mapping):
            arg = [arg["if"], arg["then"], arg["else"]]
        test = _present(evaluate(arg[0], row))
        return evaluate(arg[1] if _truthy(test) else arg[2], row)
    if op == "$ifNull":
        for value in (_present(evaluate(a, row)) for a in arg):
            if value is not None:
                return value
        return None
    values = _args(arg, row)
    if op in _COMPARE:
        a, b = values
        return _COMPARE[op](matcher.sort_key(a), matcher.sort_key(b))
    if op == "$and":
        return all(_truthy(v) for v in values)
    if op == "$or":
        return any(_truthy(v) for v in values)
    if op == "$not":
        return not _truthy(values[0])
    if any(v is None for v in values):
        return None
    if op == "$add":
        return sum(values)
    if op == "$subtract":
        return values[0] - values[1]
    if op == "$multiply":
        product = 1
        for v in values:
            product *= v
        return product
    if op == "$divide":
        if values[1] == 0:
            raise OperationFailure("can't $divide by zero", code=16608)
        return values[0] / values[1]
    if op == "$mod":
        return values[0] % values[1]
    if op == "$concat":
        return "".join(values)
    if op == "$toLower":
        return str(values[0]).lower()
    if op == "$floor":
        return int(values[0] // 1)
    raise OperationFailure(f"unsupported expression operator {op}", code=168)


def _truthy(value) -> bool:
    return value not in (None, False, 0, _MISSING)


_COMPARE = {"$eq": lambda a, b: a == b, "$ne": lambda a, b: a != b,
            "$gt": lambda a, b: a > b, "$gte": lambda a, b: a >= b,
            "$lt": lambda a, b: a < b, "$lte": lambda a, b: a <= b}
