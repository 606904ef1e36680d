"""MongoDB's query language on decoded documents: filters, sort order and projections.

The subset MongoDB documents for find filters on scalar and embedded fields: implicit and
``$eq`` equality, ``$ne``, ``$gt``/``$gte``/``$lt``/``$lte`` (bracketed by type),
``$in``/``$nin``, ``$exists``, ``$regex``, ``$not``, ``$and``/``$or``/``$nor``; dotted paths
reach into embedded documents and arrays. Anything else is refused with
``OperationFailure``, never silently ignored.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping

from bson import Binary, Int64, ObjectId, Regex
from pymongo.errors import OperationFailure

from .keys import date_ms

_MISSING = object()
_NUMBERS = (int, float, Int64)


_RANKS = {type(None): 1, bool: 8, int: 2, float: 2, Int64: 2, str: 3, dict: 4, list: 5,
          tuple: 5, bytes: 6, Binary: 6, ObjectId: 7, dt.datetime: 9}


def rank(value) -> int:
    """MongoDB's order of BSON types (missing and null rank together)."""
    known = _RANKS.get(type(value))
    if known is not None:
        return known
    if value is _MISSING:
        return 1
    if isinstance(value, bool):
        return 8
    if isinstance(value, _NUMBERS):
        return 2
    if isinstance(value, str):
        return 3
    if isinstance(value, Mapping):
        return 4
    if isinstance(value, list | tuple):
        return 5
    if isinstance(value, bytes | Binary):
        return 6
    if isinstance(value, ObjectId):
        return 7
    if isinstance(value, dt.datetime):
        return 9
    return 10


def sort_key(value):
    """A Python key ordering values as MongoDB sorts them."""
    kind = rank(value)
    if kind == 1:
        return (1, 0)
    if kind == 9:
        return (9, value if value.tzinfo else value.replace(tzinfo=dt.UTC))
    if kind == 4:
        return (4, tuple((k, sort_key(v)) for k, v in value.items()))
    if kind == 5:
        return (5, tuple(sort_key(v) for v in value))
    if kind == 7:
        return (7, value.binary)
    if kind == 6:
        return (6, bytes(value))
    if kind == 10:
        return (10, str(value))
    return (kind, value)


def equal(a, b) -> bool:
    if rank(a) != rank(b):
        return False
    if isinstance(a, dt.datetime):
        return sort_key(a) == sort_key(b)
    return a == b


def values_at(doc, path: str) -> list:
    """Every value ``path`` reaches (arrays fan out, as in MongoDB); [] when missing."""
    current = [doc]
    for part in path.split("."):
        found = []
        for value in current:
            if isinstance(value, Mapping):
                if part in value:
                    found.append(value[part])
            elif isinstance(value, list):
                if part.isdigit() and int(part) < len(value):
                    found.append(value[int(part)])
                else:
                    found.extend(v[part] for v in value if isinstance(v, Mapping) and part in v)
        current = found
    return current


def get(doc, path: str, default=None):
    """The single value at ``path`` without array fan-out (for updates and grouping)."""
    if "." not in path and type(doc) is dict:
        return doc.get(path, default)
    value = doc
    for part in path.split("."):
        if (type(value) is dict or isinstance(value, Mapping)) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return default
    return value


def matches(doc, filter: Mapping) -> bool:
    for key, condition in filter.items():
        if key == "$and":
            if not all(matches(doc, f) for f in condition):
                return False
        elif key == "$or":
            if not any(matches(doc, f) for f in condition):
                return False
        elif key == "$nor":
            if any(matches(doc, f) for f in condition):
                return False
        elif key.startswith("$"):
            raise OperationFailure(f"unknown top level operator: {key}", code=2)
        elif not _field_matches(values_at(doc, key), condition):
            return False
    return True


def _is_operator_doc(condition) -> bool:
    return isinstance(condition, Mapping) and bool(condition) and all(
        isinstance(k, str) and k.startswith("$") for k in condition)


def _field_matches(values: list, condition) -> bool:
    if _is_operator_doc(condition):
        options = condition.get("$options", "")
        return all(_operator(values, op, arg, options) for op, arg in condition.items()
                   if op != "$options")
    return _equals_any(values, condition)


def _candidates(values: list) -> list:
    """The values and, for arrays, their elements (MongoDB matches either)."""
    out = []
    for value in values:
        out.append(value)
        if isinstance(value, list):
            out.extend(value)
    return out


def _hash_key(value):
    """A key equal for values MongoDB's equality calls equal (scalars only), else None.
    Dates compare as stored: milliseconds since the epoch."""
    kind = type(value)
    if kind is dt.datetime:
        return (9, date_ms(value))
    if kind in (str, int, float, ObjectId, bool, Int64):
        return (_RANKS[kind], value)
    return None


_WANTED: dict[int, tuple[list, set]] = {}


def _wanted(targets: list) -> set:
    """The hash keys of a ``$in`` list, computed once per list for every document a
    query checks (the list is kept with its keys, so its id is not reused meanwhile)."""
    cached = _WANTED.get(id(targets))
    if cached is not None and cached[0] is targets:
        return cached[1]
    if len(_WANTED) > 256:
        _WANTED.clear()
    keys = {_hash_key(t) for t in targets}
    _WANTED[id(targets)] = (targets, keys)
    return keys


def _equals_any(values: list, target) -> bool:
    wanted = _hash_key(target)
    if wanted is not None:
        return any(_hash_key(v) == wanted for v in _candidates(values))
    if target is None:
        return not values or any(v is None for v in _candidates(values))
    if isinstance(target, re.Pattern | Regex):
        return _operator(values, "$regex", target, "")
    return any(equal(v, target) for v in _candidates(values))


def _compare(values: list, target, test) -> bool:
    kind = rank(target)
    return any(rank(v) == kind and test(sort_key(v), sort_key(target))
               for v in _candidates(values))


def _operator(values: list, op: str, arg, options: str) -> bool:
    if op == "$eq":
        return _equals_any(values, arg)
    if op == "$ne":
        return not _equals_any(values, arg)
    if op == "$gt":
        return _compare(values, arg, lambda a, b: a > b)
    if op == "$gte":
        return _compare(values, arg, lambda a, b: a >= b)
    if op == "$lt":
        return _compare(values, arg, lambda a, b: a < b)
    if op == "$lte":
        return _compare(values, arg, lambda a, b: a <= b)
    if op == "$in":
        targets = _list(arg, op)
        wanted = _wanted(targets)
        if None not in wanted:
            return any(_hash_key(v) in wanted for v in _candidates(values))
        return any(_equals_any(values, target) for target in targets)
    if op == "$nin":
        return not any(_equals_any(values, target) for target in _list(arg, op))
    if op == "$exists":
        return bool(values) == bool(arg)
    if op == "$regex":
        pattern = _pattern(arg, options)
        return any(isinstance(v, str) and pattern.search(v) for v in _candidates(values))
    if op == "$not":
        return not _field_matches(values, arg)
    raise OperationFailure(f"unknown operator: {op}", code=2)


def _list(arg, op: str) -> list:
    if not isinstance(arg, list | tuple | set | frozenset):
        raise OperationFailure(f"{op} needs an array", code=2)
    return arg if isinstance(arg, list) else list(arg)


def _pattern(arg, options: str) -> re.Pattern:
    if isinstance(arg, re.Pattern):
        return arg
    if isinstance(arg, Regex):
        arg, options = arg.pattern, arg.flags if isinstance(arg.flags, str) else options
    flags = 0
    for letter, flag in (("i", re.I), ("m", re.M), ("s", re.S), ("x", re.X)):
        if letter in options:
            flags |= flag
    return re.compile(arg, flags)


def project(doc: Mapping, projection: Mapping | None) -> dict:
    """``find``'s projection: inclusion (``{a: 1, "b.c": 1}``) or exclusion (``{a: 0}``);
    ``_id`` is kept unless excluded."""
    if not projection:
        return dict(doc)
    fields = {k: v for k, v in projection.items() if k != "_id"}
    keep_id = projection.get("_id", 1)
    if all(not v for v in fields.values()):     # exclusion, ``{_id: 0}`` alone included
        out = {k: v for k, v in doc.items() if k not in fields}
        for path in fields:
            if "." in path:
                _drop(out, path)
        if not keep_id:
            out.pop("_id", None)
        return out
    out: dict = {}
    if keep_id and "_id" in doc:
        out["_id"] = doc["_id"]
    for path in fields:
        _copy(doc, out, path.split("."))
    return out


def _copy(source, target: dict, parts: list[str]) -> None:
    head = parts[0]
    if not isinstance(source, Mapping) or head not in source:
        return
    value = source[head]
    if len(parts) == 1:
        target[head] = value
    elif isinstance(value, Mapping):
        _copy(value, target.setdefault(head, {}), parts[1:])


def _drop(doc: dict, path: str) -> None:
    *parents, last = path.split(".")
    for part in parents:
        nxt = doc.get(part)
        if not isinstance(nxt, Mapping):
            return
        nxt = dict(nxt)
        doc[part] = nxt
        doc = nxt
    doc.pop(last, None)
