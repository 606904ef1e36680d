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
from collections.abc import Callable, Iterable, Mapping

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
    computed = [(k, compiled(v)) for k, v in spec.items() if not _is_flag(v)]
    flags = {k: v for k, v in spec.items() if _is_flag(v)}
    excluding = not computed and any(not v for k, v in flags.items() if k != "_id")
    if excluding:
        return [matcher.project(row, flags) for row in rows]
    kept = {k: v for k, v in flags.items() if v or k == "_id"} or {"_id": 1}
    keep_id, included = kept.get("_id", 1), [k for k in kept if k != "_id"]
    out = []
    for row in rows:
        # An inclusion stage: only ``_id`` of the flags (find's ``{_id: 0}`` would keep
        # every other field).
        new = matcher.project(row, kept) if included else (
            {"_id": row["_id"]} if keep_id and "_id" in row else {})
        for key, expression in computed:
            value = expression(row)
            if value is not _MISSING:
                new[key] = value
        out.append(new)
    return out


def _is_flag(value) -> bool:
    return isinstance(value, bool) or (type(value) is int and value in (0, 1))


def _add_fields(rows, spec):
    fields = [(k, compiled(v)) for k, v in spec.items()]
    out = []
    for row in rows:
        new = dict(row)
        for key, expression in fields:
            new[key] = expression(row)
        out.append(new)
    return out


def _group(rows, spec):
    if "_id" not in spec:
        raise OperationFailure("a $group specification must include an _id", code=15955)
    key_of = compiled(spec["_id"])
    accumulators = [(name, *_accumulator(v)) for name, v in spec.items() if name != "_id"]
    groups: dict = {}
    for row in rows:
        key_value = key_of(row)
        key_value = None if key_value is _MISSING else key_value
        key = matcher.sort_key(key_value)
        state = groups.get(key)
        if state is None:
            state = groups[key] = (key_value, [kind() for _, kind, _ in accumulators])
        for (_, _, expression), accumulator in zip(accumulators, state[1], strict=True):
            accumulator.add(expression(row))
    return [{"_id": key_value, **{name: accumulator.result() for (name, _, _), accumulator
                                  in zip(accumulators, states, strict=True)}}
            for key_value, states in groups.values()]


def _accumulator(spec) -> tuple[Callable[[], object], Callable[[Mapping], object]]:
    """An accumulator's maker and its compiled expression; refused if malformed."""
    if not isinstance(spec, Mapping) or len(spec) != 1:
        raise OperationFailure(f"invalid accumulator {spec!r}", code=40234)
    (op, expr), = spec.items()
    if op not in _ACCUMULATORS:
        raise OperationFailure(f"unknown group operator {op}", code=15952)
    return _ACCUMULATORS[op], compiled(expr)


class _Sum:
    """``$sum``: numbers only (not booleans), added in row order."""

    __slots__ = ("total",)

    def __init__(self):
        self.total = 0

    def add(self, value) -> None:
        kind = type(value)
        if kind is int or kind is float or (kind is not bool and matcher.rank(value) == 2):
            self.total += value

    def result(self):
        return self.total


class _Values:
    """Every other accumulator: the values kept, reduced at the end."""

    __slots__ = ("op", "values")

    def __init__(self, op: str):
        self.op, self.values = op, []

    def add(self, value) -> None:
        if self.op == "$avg" and matcher.rank(value) != 2:
            return
        if value is _MISSING and self.op not in ("$first", "$last"):
            return
        self.values.append(None if value is _MISSING else value)

    def result(self):
        values, op = self.values, self.op
        if op == "$avg":
            return sum(values) / len(values) if values else None
        present = [v for v in values if v is not None]
        if op == "$min":
            return min(present, key=matcher.sort_key, default=None)
        if op == "$max":
            return max(present, key=matcher.sort_key, default=None)
        if op == "$first":
            return values[0] if values else None
        if op == "$last":
            return values[-1] if values else None
        if op == "$push":
            return values
        unique: dict = {}
        for value in values:
            unique.setdefault(matcher.sort_key(value), value)
        return list(unique.values())


_ACCUMULATORS = {"$sum": _Sum, **{op: (lambda op=op: _Values(op)) for op in (
    "$avg", "$min", "$max", "$first", "$last", "$push", "$addToSet")}}


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
# An expression is compiled once per stage into a function of the row: a ``$group`` over
# half a million rollup documents evaluates its key and accumulators millions of times.
def compiled(expr) -> Callable[[Mapping], object]:
    """``expr`` as a function of a row (``_MISSING`` for a path the row lacks)."""
    if isinstance(expr, str):
        if expr.startswith("$$"):
            raise OperationFailure(f"variables are not supported: {expr}", code=17276)
        if expr.startswith("$"):
            return _getter(expr[1:])
        return lambda row: expr
    if isinstance(expr, list):
        parts = [compiled(e) for e in expr]
        return lambda row: [part(row) for part in parts]
    if isinstance(expr, Mapping):
        if len(expr) == 1:
            (op, arg), = expr.items()
            if isinstance(op, str) and op.startswith("$"):
                return _operator(op, arg)
        fields = [(k, compiled(v)) for k, v in expr.items()]
        return lambda row: {k: _present(part(row)) for k, part in fields}
    return lambda row: expr


def _getter(path: str) -> Callable[[Mapping], object]:
    """``matcher.get(row, path, _MISSING)``, with the path split once and embedded
    dictionaries walked directly."""
    parts = path.split(".")

    def get(row):
        value = row
        for part in parts:
            if type(value) is not dict:
                return matcher.get(row, path, _MISSING)
            value = value.get(part, _MISSING)
            if value is _MISSING:
                return _MISSING
        return value
    return get


def _present(value):
    return None if value is _MISSING else value


def _arguments(arg) -> list:
    return [compiled(v) for v in (arg if isinstance(arg, list) else [arg])]


def date_part(op: str, value):
    if not isinstance(value, dt.datetime):
        raise OperationFailure(f"{op} needs a date, got {type(value).__name__}", code=16006)
    return _PARTS[op](value.astimezone(dt.UTC) if value.tzinfo else value)


_PARTS = {"$year": lambda d: d.year, "$month": lambda d: d.month,
          "$dayOfMonth": lambda d: d.day, "$hour": lambda d: d.hour,
          "$minute": lambda d: d.minute, "$second": lambda d: d.second,
          "$dayOfWeek": lambda d: d.isoweekday() % 7 + 1,
          "$dayOfYear": lambda d: d.timetuple().tm_yday}
DATE_PARTS = tuple(_PARTS)


def _operator(op: str, arg) -> Callable[[Mapping], object]:
    if op == "$literal":
        return lambda row: arg
    if op in DATE_PARTS:
        date = _arguments(arg["date"] if isinstance(arg, Mapping) else arg)[0]

        def part(row):
            value = _present(date(row))
            return None if value is None else date_part(op, value)
        return part
    if op == "$cond":
        if isinstance(arg, Mapping):
            arg = [arg["if"], arg["then"], arg["else"]]
        test, then, otherwise = (compiled(a) for a in arg[:3])
        return lambda row: (then if _truthy(_present(test(row))) else otherwise)(row)
    if op == "$ifNull":
        options = [compiled(a) for a in arg]

        def if_null(row):
            for option in options:
                value = _present(option(row))
                if value is not None:
                    return value
            return None
        return if_null
    arguments = _arguments(arg)
    if op in _COMPARE:
        compare, (left, right) = _COMPARE[op], arguments
        return lambda row: compare(matcher.sort_key(_present(left(row))),
                                   matcher.sort_key(_present(right(row))))
    if op in _LOGICAL:
        return lambda row: _LOGICAL[op]([_truthy(_present(a(row))) for a in arguments])
    function = _ARITHMETIC.get(op)
    if function is None:
        raise OperationFailure(f"unsupported expression operator {op}", code=168)

    def arithmetic(row):
        values = [_present(a(row)) for a in arguments]
        return None if any(v is None for v in values) else function(values)
    return arithmetic


def _divide(values):
    if values[1] == 0:
        raise OperationFailure("can't $divide by zero", code=16608)
    return values[0] / values[1]


def _product(values):
    product = 1
    for v in values:
        product *= v
    return product


_LOGICAL = {"$and": all, "$or": any, "$not": lambda truths: not truths[0]}
_ARITHMETIC = {
    "$add": sum, "$subtract": lambda v: v[0] - v[1], "$multiply": _product,
    "$divide": _divide, "$mod": lambda v: v[0] % v[1], "$concat": "".join,
    "$toLower": lambda v: str(v[0]).lower(), "$floor": lambda v: int(v[0] // 1),
}


def _truthy(value) -> bool:
    return value not in (None, False, 0, _MISSING)


_COMPARE = {"$eq": lambda a, b: a == b, "$ne": lambda a, b: a != b,
            "$gt": lambda a, b: a > b, "$gte": lambda a, b: a >= b,
            "$lt": lambda a, b: a < b, "$lte": lambda a, b: a <= b}
