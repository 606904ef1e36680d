"""``$inc``/``$set`` applied to a document's BSON bytes, decoding only what they touch.

A ``stats.daily`` document holds 1,440 minute counters; the recorder's update raises a few
of them, ``daily``, a few ``hourly.H`` and its flush number. Decoding and re-encoding the
whole document for that costs ~0.3 ms; here the top level and ``minute`` are walked
element by element (their untouched elements copied as bytes), and only the small
embedded documents holding the changed values (``minute.H``, ``hourly``, ``flushes``) are
decoded and encoded, by pymongo's C codec. Fields that do not exist yet are appended, as
MongoDB appends them. Anything unusual (a path through a non-document, ``$inc`` of a
non-number, a BSON type this walker does not size) returns None: the caller then takes
the general path, which applies the same update or raises MongoDB's error.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping

import bson

from .keys import CODEC

_INT32 = struct.Struct("<i")
_FIXED = {0x01: 8, 0x07: 12, 0x08: 1, 0x09: 8, 0x0A: 0, 0x10: 4, 0x11: 8, 0x12: 8,
          0x13: 16, 0x7F: 0, 0xFF: 0}
_SIZED = (0x02, 0x0D, 0x0E)           # string, code, symbol: int32 length + bytes
_NESTED = (0x03, 0x04)                 # document, array: int32 total size
_WHOLE_BYTES = 2048                   # leaf levels this small are decoded whole, in C
_FAIL = object()


def changes(update: Mapping) -> dict | None:
    """The tree of an update's ``$inc``/``$set`` leaves, ``(operator, value)`` tuples
    under dicts; None when it holds anything else this module does not apply
    (``$setOnInsert`` only matters on insert). A dimension document's update holds
    hundreds of paths, mostly under the same parents (``v.browser.*``): their node is
    found once for a run of them."""
    tree: dict = {}
    for op, fields in update.items():
        if op == "$setOnInsert":
            continue
        if (op != "$inc" and op != "$set") or not isinstance(fields, Mapping):
            return None
        parents_of_node, node = None, tree
        for path, value in fields.items():
            parts = _PATHS.get(path)
            if parts is None:
                parts = _path(path)
            if not parts:
                return None      # _id, empty or $-names: the general path
            parents, last = parts
            if parents is not parents_of_node:
                node = tree
                for part in parents:
                    node = node.setdefault(part, {})
                    if type(node) is not dict:
                        return None
                parents_of_node = parents
            if last in node:
                return None      # two operators on one path: the general path
            node[last] = (op, value)
    return tree


_PATHS: dict[str, tuple] = {}    # a path's parents and last name, or () if unusable
_PARENTS: dict[tuple, tuple] = {}  # one tuple per parents, so that ``is`` compares them


def _path(path: str) -> tuple:
    """``path`` split once (a counter document's updates repeat the same few thousand
    paths, a dimension's hundreds per update), remembered up to 100,000 paths."""
    parts = path.split(".")
    usable = parts[0] != "_id" and "" not in parts and "$" not in path
    if len(_PATHS) >= 100_000:
        _PATHS.clear()
        _PARENTS.clear()
    found = ()
    if usable:
        parents = tuple(parts[:-1])
        found = (_PARENTS.setdefault(parents, parents), parts[-1])
    _PATHS[path] = found
    return found


def apply(blob: bytes, tree: dict) -> bytes | None:
    return _document(blob, 0, len(blob), tree)


def top_fields(filter: Mapping) -> set[str]:
    """The top-level field names a filter reads (through ``$and``/``$or``/``$nor``)."""
    names: set[str] = set()
    for key, condition in filter.items():
        if key in ("$and", "$or", "$nor"):
            for sub in condition:
                names |= top_fields(sub)
        else:
            names.add(key.split(".")[0])
    return names


def fields(blob: bytes, names: set[str]) -> dict:
    """The top-level fields ``names`` of a document, decoded (the rest skipped): their
    elements are cut out and decoded together, in one call to the C codec."""
    wanted = {name.encode() for name in names}
    parts = []
    for key, start, end, _, _ in _elements(blob, 0, len(blob)):
        if key in wanted:
            parts.append(blob[start:end])
            if len(parts) == len(wanted):
                break
    return _decode_elements(b"".join(parts)) if parts else {}


def _elements(blob: bytes, begin: int, finish: int):
    """(key bytes, element start, element end, type, value start) of each element of
    the BSON document ``blob[begin:finish]``."""
    end = finish - 1
    at = begin + 4
    index, unpack = blob.index, _INT32.unpack_from
    while at < end:
        kind = blob[at]
        key_end = index(0, at + 1)
        value = key_end + 1
        size = _FIXED.get(kind)
        if size is None:
            if kind in _NESTED:
                size = unpack(blob, value)[0]
            elif kind in _SIZED:
                size = 4 + unpack(blob, value)[0]
            elif kind == 0x05:
                size = 5 + unpack(blob, value)[0]
            else:
                return  # regex, code-with-scope, ...: sized by parsing; leave to the codec
        yield blob[at + 1:key_end], at, value + size, kind, value
        at = value + size


def _decode_elements(elements: bytes) -> dict:
    """BSON elements laid end to end, decoded as the document they make."""
    return bson.decode(_INT32.pack(len(elements) + 5) + elements + b"\x00",
                       codec_options=CODEC)


def _document(blob: bytes, begin: int, finish: int, tree: dict) -> bytes | None:
    if finish - begin <= _WHOLE_BYTES and all(type(c) is tuple for c in tree.values()):
        return _whole(blob[begin:finish], tree)
    encoded = {key.encode(): change for key, change in tree.items()}
    parts, seen = [], set()
    complete = begin + 4
    for key, start, end, kind, value in _elements(blob, begin, finish):
        complete = end
        change = encoded.get(key)
        if change is None:
            parts.append(blob[start:end])
            continue
        seen.add(key)
        if type(change) is tuple:
            name = key.decode()
            op, by = change
            if op == "$set":
                new = {name: by}
            else:
                old = _decode_elements(blob[start:end])[name]
                if not _number(old) or not _number(by):
                    return None
                new = {name: old + by}
            parts.append(bson.encode(new)[4:-1])
        elif kind == 0x03:
            inner = _document(blob, value, end, change)
            if inner is None:
                return None
            parts.append(blob[start:value])
            parts.append(inner)
        else:
            return None
    if complete != finish - 1:
        return None  # an element _elements could not size
    missing = {k.decode(): _fresh(c) for k, c in encoded.items() if k not in seen}
    if any(v is _FAIL for v in missing.values()):
        return None
    if missing:
        parts.append(bson.encode(missing)[4:-1])
    body = b"".join(parts)
    return _INT32.pack(len(body) + 5) + body + b"\x00"


def _whole(blob: bytes, tree: dict) -> bytes | None:
    doc = bson.decode(blob, codec_options=CODEC)
    for key, (op, by) in tree.items():
        if op == "$set":
            doc[key] = by
        else:
            old = doc.get(key, 0)
            if not _number(old) or not _number(by):
                return None
            doc[key] = old + by
    return bson.encode(doc)


def _fresh(change):
    """The value a missing field takes: the leaf's value, or a document of them."""
    if type(change) is tuple:
        op, value = change
        return value if op == "$set" or _number(value) else _FAIL
    out = {}
    for key, inner in change.items():
        value = _fresh(inner)
        if value is _FAIL:
            return _FAIL
        out[key] = value
    return out


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
