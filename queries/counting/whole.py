"""The document a flush's guarded ``$inc`` upsert creates, built whole: a document the
store does not hold yet is inserted so (``guarded``: one bulk insert, where every upsert
would be read, matched against nothing and built from its update operators one by one).

``inserted`` gives what the upsert ``{_id, guard: {$ne: S}}`` / ``{$inc: inc, $set:
sets, $setOnInsert: {metadata}}`` inserts: ``_id``, the ``$inc`` fields nested in their
order, then the ``$set`` ones, then ``metadata``, so a document is the same whichever
way it came in (MongoDB may order an upsert's fields otherwise; no read depends on it).
"""

from __future__ import annotations

import datetime as dt

# Paths split once: a flush repeats the same few thousand (minute.H.M, v.browser.X...).
_PATHS: dict[str, tuple] = {}
_PARENTS: dict[tuple, tuple] = {}      # one tuple per parents, so that ``is`` compares them
_PLAIN = (int, float, str, bool, dt.datetime, type(None))


def inserted(doc_id, inc: dict, sets: dict, metadata: dict) -> dict | None:
    """The whole document, or None when the update is one the upsert would refuse or
    apply otherwise (a conflict of paths, ``$inc`` of a non-integer, an odd path or
    value): left to the upsert, which gives its answer or its error."""
    doc: dict = {"_id": doc_id}
    if not (_nest(doc, inc, int) and _nest(doc, sets, _PLAIN)):
        return None
    doc["metadata"] = metadata
    return doc


def _nest(doc: dict, fields: dict, kinds) -> bool:
    """``fields`` (dotted paths) added to ``doc`` as nested documents; False if one
    cannot be added as a new field of a value of ``kinds``."""
    parents_of_node, node = None, doc
    for path, value in fields.items():
        parts = _PATHS.get(path)
        if parts is None:
            parts = _path(path)
        if not parts or not isinstance(value, kinds) or (kinds is int and type(value) is bool):
            return False
        parents, last = parts
        if parents is not parents_of_node:
            node = doc
            for part in parents:
                child = node.get(part)
                if child is None:
                    child = node[part] = {}
                elif type(child) is not dict:
                    return False
                node = child
            parents_of_node = parents
        if last in node:
            return False
        node[last] = value
    return True


def _path(path: str) -> tuple:
    """``path``'s parents and last name, () if no upsert takes it as a new field."""
    parts = path.split(".")
    if len(_PATHS) >= 100_000:
        _PATHS.clear()
        _PARENTS.clear()
    found = ()
    if parts[0] not in ("_id", "metadata") and "" not in parts and "$" not in path:
        parents = tuple(parts[:-1])
        found = (_PARENTS.setdefault(parents, parents), parts[-1])
    _PATHS[path] = found
    return found
