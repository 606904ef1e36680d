"""MongoDB's update operators on decoded documents, and the document an upsert creates.

``$set``, ``$unset``, ``$inc``, ``$min``, ``$max``, ``$setOnInsert`` (only when the upsert
inserts) and ``$push`` (with ``$each``), on dotted paths that create the embedded
documents they name. Anything else is refused with ``WriteError``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from bson import Int64
from pymongo.errors import WriteError

from .matcher import sort_key

OPERATORS = ("$set", "$unset", "$inc", "$min", "$max", "$setOnInsert", "$push")
_NUMBERS = (int, float, Int64)


def is_operator_update(update: Mapping) -> bool:
    keys = list(update)
    if keys and all(k.startswith("$") for k in keys):
        return True
    if any(k.startswith("$") for k in keys):
        raise WriteError("an update mixes operators and fields", code=9)
    return False


def apply(doc: dict, update: Mapping, inserting: bool = False) -> dict:
    """``doc`` (modified in place and returned) after ``update``'s operators."""
    for op, fields in update.items():
        if op not in OPERATORS:
            raise WriteError(f"unknown update operator: {op}", code=9)
        if op == "$setOnInsert" and not inserting:
            continue
        if not isinstance(fields, Mapping):
            raise WriteError(f"{op} needs a document", code=9)
        for path, value in fields.items():
            if path == "_id" and op != "$setOnInsert" and not inserting:
                if doc.get("_id") != value:
                    raise WriteError("the _id field cannot be changed", code=66)
                continue
            _apply_one(doc, op, path, value)
    return doc


def _apply_one(doc: dict, op: str, path: str, value) -> None:
    parent, last = _parent(doc, path, create=op != "$unset")
    if parent is None:
        return
    if op in ("$set", "$setOnInsert"):
        parent[last] = _clone(value)
    elif op == "$unset":
        parent.pop(last, None)
    elif op == "$inc":
        if not isinstance(value, _NUMBERS) or isinstance(value, bool):
            raise WriteError(f"cannot $inc by a non-number ({path})", code=14)
        current = parent.get(last, 0)
        if not isinstance(current, _NUMBERS) or isinstance(current, bool):
            raise WriteError(f"cannot $inc the non-number field {path!r}", code=14)
        parent[last] = current + value
    elif op in ("$min", "$max"):
        if last not in parent:
            parent[last] = _clone(value)
        else:
            lower = sort_key(value) < sort_key(parent[last])
            if lower == (op == "$min") and sort_key(value) != sort_key(parent[last]):
                parent[last] = _clone(value)
    elif op == "$push":
        items = value["$each"] if isinstance(value, Mapping) and "$each" in value else [value]
        current = parent.setdefault(last, [])
        if not isinstance(current, list):
            raise WriteError(f"cannot $push to the non-array field {path!r}", code=2)
        current.extend(_clone(list(items)))


_IMMUTABLE = frozenset((str, int, float, bool, type(None), dt.datetime))


def _clone(value):
    """A copy sharing nothing mutable with ``value`` (documents and arrays are copied;
    every other BSON value is immutable in Python)."""
    kind = type(value)
    if kind in _IMMUTABLE:      # most values: no ABC check (a flush clones 100,000s)
        return value
    if kind is dict:
        return {k: _clone(v) for k, v in value.items()}
    if isinstance(value, Mapping):
        return {k: _clone(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clone(v) for v in value]
    return value


def _parent(doc: dict, path: str, create: bool) -> tuple[dict | None, str]:
    *parts, last = path.split(".")
    node = doc
    for part in parts:
        child = node.get(part)
        if child is None:
            if not create:
                return None, last
            child = node[part] = {}
        elif not isinstance(child, dict):
            if isinstance(child, Mapping):
                child = node[part] = dict(child)
            else:
                raise WriteError(f"cannot create field {last!r} in {part!r} "
                                 f"(a {type(child).__name__})", code=28)
        node = child
    return node, last


def upserted(filter: Mapping, update: Mapping, tree: dict | None = None) -> dict:
    """The document an upsert inserts: ``seed(filter)`` after ``update``'s operators.
    ``tree``, the update's ``$inc``/``$set`` leaves (``splice.changes``), builds the new
    fields in one pass (a counter document gets hundreds of them) when that gives what
    ``apply`` gives: no field shared with the seed, ``$setOnInsert`` (if any) last."""
    doc = seed(filter)
    names = list(update)
    on_insert = update.get("$setOnInsert", {})
    if tree is None or any(name in tree for name in doc) or not isinstance(
            on_insert, Mapping) or ("$setOnInsert" in names and names[-1] != "$setOnInsert"):
        return apply(doc, update, inserting=True)
    try:
        doc.update(_created(tree))
    except WriteError:      # refused: with the general path's words (its order of fields)
        return apply(seed(filter), update, inserting=True)
    for path, value in on_insert.items():
        _apply_one(doc, "$setOnInsert", path, value)
    return doc


def _created(tree: dict, prefix: str = "") -> dict:
    """The fields ``tree``'s leaves give a document that does not hold them yet."""
    out = {}
    for name, change in tree.items():
        if type(change) is dict:
            out[name] = _created(change, f"{prefix}{name}.")
            continue
        op, value = change
        if op == "$inc":
            if type(value) is int:
                out[name] = value
                continue
            if not isinstance(value, _NUMBERS) or isinstance(value, bool):
                raise WriteError(f"cannot $inc by a non-number ({prefix}{name})", code=14)
            out[name] = 0 + value          # as apply's ``current + value`` from 0
        else:
            out[name] = _clone(value)
    return out


def seed(filter: Mapping) -> dict:
    """The fields an upsert takes from its filter: equality conditions, not operators."""
    doc: dict = {}
    for key, condition in filter.items():
        if key.startswith("$"):
            if key == "$and":
                for part in condition:
                    doc.update(seed(part))
            continue
        if type(condition) is not str and isinstance(condition, Mapping) and condition \
                and all(str(k).startswith("$") for k in condition):
            if "$eq" in condition:
                _apply_one(doc, "$set", key, condition["$eq"])
            continue
        _apply_one(doc, "$set", key, condition)
    return doc
