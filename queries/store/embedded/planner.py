"""MongoDB filters, sorts and ``$group`` stages as SQL over a collection's key columns.

Every field named by an index has a column (``keys.py`` says how values are stored).
:func:`where` turns the parts of a filter on those fields into a SQL condition and says
whether that condition is the whole filter (``exact``) or a superset whose rows the
matcher must still check; a part it cannot express (``$ne`` of anything but a string,
``$regex``, a field without a column) is left to the matcher, never guessed.
:func:`group_sql` runs a leading ``$match`` + ``$group`` in SQL when every field it
reads has a column, answered from a covering index without decoding a document.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from . import keys
from .matcher import sort_key
from .pipeline import DATE_PARTS, date_part

ID_COLUMN = "id"
# An ``$in`` list this long or shorter is one SQL ``IN (?, ...)`` on the index; a longer one
# is checked document by document. SQLite 3.32+ takes 32,766 parameters per statement (a
# backfill's look-up of a batch by _id, at 501 values, scanned the whole collection).
MAX_IN = 10_000


@dataclass
class Where:
    sql: str = "1"
    params: list = field(default_factory=list)
    exact: bool = True


class KeyedColumns(set):
    """The key columns of a keyed table (``layouts``): ``_id`` has no column there, its
    conditions become conditions on the key."""

    def __init__(self, columns, layout):
        super().__init__(columns)
        self.layout = layout


def column_name(path: str) -> str:
    return ID_COLUMN if path == "_id" else "k:" + path


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def where(filter: Mapping, columns: set[str]) -> Where:
    """The SQL condition of ``filter`` over ``columns`` (field paths with a column)."""
    parts, params, exact = [], [], True
    for key, condition in filter.items():
        if key == "$and":
            for sub in condition:
                inner = where(sub, columns)
                parts.append(inner.sql)
                params += inner.params
                exact &= inner.exact
        elif key == "$or":
            branches = [where(sub, columns) for sub in condition]
            if not branches or any(b.sql == "1" and not b.exact for b in branches):
                exact = False
                continue
            parts.append("(" + " OR ".join(f"({b.sql})" for b in branches) + ")")
            params += [p for b in branches for p in b.params]
            exact &= all(b.exact for b in branches)
        elif key.startswith("$") or (key != "_id" and key not in columns):
            exact = False
        elif key == "_id" and isinstance(columns, KeyedColumns):
            sql, values, whole = _keyed_id(columns.layout, condition)
            if sql:
                parts.append(sql)
                params += values
            exact &= whole
        else:
            sql, values, whole = _condition(quote(column_name(key)), key, condition)
            if sql:
                parts.append(sql)
                params += values
            exact &= whole
    return Where(" AND ".join(parts) if parts else "1", params, exact)


def split_keyed_in(filter: Mapping, columns: set[str]) -> list[dict] | None:
    """A keyed table's ``_id: {$in: ids}`` too long for one statement (each id takes a
    parameter per key column), as filters of distinct ids that each fit: their matches,
    put together, are the filter's. None if there is nothing to split."""
    condition = filter.get("_id")
    if not isinstance(columns, KeyedColumns) or not isinstance(condition, Mapping) \
            or list(condition) != ["$in"] or not isinstance(condition["$in"], list | tuple):
        return None
    per = MAX_IN // len(columns.layout.paths)
    if len(condition["$in"]) <= per:
        return None
    try:
        ids = list(dict.fromkeys(condition["$in"]))
    except TypeError:                # an unhashable id: left to the matcher
        return None
    return [{**filter, "_id": {"$in": ids[at:at + per]}} for at in range(0, len(ids), per)]


def _keyed_id(layout, condition) -> tuple[str, list, bool]:
    """An ``_id`` condition of a keyed table: equality and ``$in`` as key conditions (an
    ``_id`` no document can have matches none), the rest left to the matcher."""
    if not (isinstance(condition, Mapping) and condition and all(
            isinstance(k, str) and k.startswith("$") for k in condition)):
        condition = {"$eq": condition}
    parts, params, exact = [], [], True
    for op, arg in condition.items():
        if op == "$eq" or (op == "$in" and isinstance(arg, list | tuple)
                           and len(arg) * len(layout.paths) <= MAX_IN):
            found = [k for k in (layout.key_of_id(v) for v in
                                 (arg if op == "$in" else [arg])) if k is not None]
            if not found:
                parts.append("0")
                continue
            sql, values = _keys_sql(layout, found)
            parts.append(sql)
            params += values
        else:
            exact = False
    return " AND ".join(parts), params, exact


def _keys_sql(layout, found: list[tuple]) -> tuple[str, list]:
    """Rows whose key is one of ``found``, by (site, date) so that each term is a search
    of the primary key (a row-value ``IN`` would scan the table)."""
    site, page, date = (quote(column_name(p)) for p in layout.paths)
    groups: dict[tuple, list] = {}
    for key in found:
        groups.setdefault((key[0], key[2]), []).append(key[1])
    if len(groups) > 200:
        one = f"({', '.join('?' * len(layout.paths))})"
        return (f"({site}, {page}, {date}) IN (VALUES {', '.join([one] * len(found))})",
                [v for k in found for v in k])
    terms, params = [], []
    for (s, d), pages in groups.items():
        terms.append(f"({site} = ? AND {date} = ? AND {page} IN "
                     f"({','.join('?' * len(pages))}))")
        params += [s, d, *pages]
    return "(" + " OR ".join(terms) + ")", params


def _condition(col: str, path: str, condition) -> tuple[str, list, bool]:
    if isinstance(condition, Mapping) and condition and all(
            isinstance(k, str) and k.startswith("$") for k in condition):
        parts, params, exact = [], [], True
        paired = _paired(condition)
        for op, arg in condition.items():
            sql, values, whole = _operator(col, path, op, arg, op not in paired)
            if sql:
                parts.append(sql)
                params += values
            exact &= whole
        return " AND ".join(parts), params, exact
    return _equals(col, path, condition)


def _equals(col: str, path: str, value) -> tuple[str, list, bool]:
    if value is None:
        return f"{col} IS NULL", [], True
    try:
        return f"{col} = ?", [keys.encode(value, path)], True
    except keys.UnindexableValueError:
        return "", [], False


def _paired(condition: Mapping) -> set[str]:
    """The range operators of ``condition`` that bound each other: one lower and one upper
    bound of the same type need no bounds of their type besides (and must not get them:
    SQLite would pick one bound of each side for its index range, and with the type's
    own bounds among them it may scan every date to find a day's)."""
    lower = [op for op in condition if op in ("$gt", "$gte")]
    upper = [op for op in condition if op in ("$lt", "$lte")]
    if len(lower) != 1 or len(upper) != 1:
        return set()
    bounds = keys.bracket(condition[lower[0]])
    if bounds is None or bounds != keys.bracket(condition[upper[0]]):
        return set()
    return {lower[0], upper[0]}


def _operator(col: str, path: str, op: str, arg, bracketed: bool = True,
              ) -> tuple[str, list, bool]:
    if op == "$eq":
        return _equals(col, path, arg)
    if op == "$ne" and isinstance(arg, str):
        # A column never holds an array (refused at write), and a string is its own key:
        # "is not" is $ne, a missing field (NULL) included.
        return f"{col} IS NOT ?", [keys.encode(arg, path)], True
    if op == "$in" and isinstance(arg, list | tuple) and len(arg) <= MAX_IN:
        values = [v for v in arg if v is not None]
        try:
            encoded = [keys.encode(v, path) for v in values]
        except keys.UnindexableValueError:
            return "", [], False
        sql = f"{col} IN ({','.join('?' * len(encoded))})" if encoded else "0"
        if len(values) < len(arg):
            sql = f"({sql} OR {col} IS NULL)"
        return sql, encoded, True
    if op in ("$gt", "$gte", "$lt", "$lte"):
        bounds = keys.bracket(arg)
        if bounds is None:
            return "", [], False
        lower, upper = bounds
        sign = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}[op]
        value = keys.encode(arg, path)
        if not bracketed:
            return f"{col} {sign} ?", [value], True
        if op in ("$gt", "$gte"):
            return f"{col} {sign} ? AND {col} < ?", [value, upper], True
        if lower is None:
            return f"{col} {sign} ?", [value], True
        return f"{col} {sign} ? AND {col} >= ?", [value, lower], True
    return "", [], False


def order_by(sort: list[tuple[str, int]], columns: set[str]) -> str | None:
    """``ORDER BY`` for ``sort`` when every field has a column; None otherwise."""
    keyed = isinstance(columns, KeyedColumns)
    if not all((f == "_id" and not keyed) or f in columns for f, _ in sort):
        return None
    terms = [f"{quote(column_name(f))} {'DESC' if d == -1 else 'ASC'}" for f, d in sort]
    tie = 'DESC' if sort[0][1] == -1 else 'ASC'
    if keyed:
        return ", ".join(terms + [f"{quote(column_name(p))} {tie}"
                                  for p in columns.layout.paths])
    return ", ".join(terms + [f"rid {tie}"])


def split_in(filter: Mapping, columns: set[str]) -> tuple[str, list] | None:
    """The one ``$in`` on a column of ``filter`` (field, values), to run as one query per
    value merged in sort order, as MongoDB's SORT_MERGE does; None otherwise."""
    found = [(k, v["$in"]) for k, v in filter.items()
             if (k in columns or (k == "_id" and not isinstance(columns, KeyedColumns)))
             and isinstance(v, Mapping) and list(v) == ["$in"]
             and isinstance(v["$in"], list | tuple) and 1 < len(v["$in"]) <= 100]
    return found[0] if len(found) == 1 else None


# -- $group push-down --------------------------------------------------------------------
_UNITS = {"$minute": 60_000, "$hour": 3_600_000, "$second": 1000}
_DAY = 86_400_000


@dataclass
class GroupPlan:
    """``SELECT <keys>, <accumulators> ... GROUP BY <keys>``, then :meth:`rows` folds the
    SQL rows into MongoDB's group documents (date parts from the truncated instants)."""

    selects: list[str]
    shape: object            # how to rebuild _id from the selected key values
    accumulators: dict[str, tuple[str, str]]

    def rows(self, sql_rows) -> list[dict]:
        groups: dict = {}
        width = len(self.selects)
        for row in sql_rows:
            key_value = _rebuild(self.shape, row[:width])
            marker = repr(key_value)
            values = row[width:]
            group = groups.get(marker)
            if group is None:
                groups[marker] = {"_id": key_value, **{
                    name: _initial(kind, value) for (name, (kind, _)), value
                    in zip(self.accumulators.items(), values, strict=True)}}
                continue
            for (name, (kind, _)), value in zip(self.accumulators.items(), values,
                                                strict=True):
                group[name] = _fold(kind, group[name], value)
        return list(groups.values())


def group_sql(group: Mapping, columns: set[str]) -> GroupPlan | None:
    """The plan of a ``$group`` stage over columns; None when it reads other fields or
    uses accumulators other than ``$sum``/``$min``/``$max``. The date parts of one field
    share one SQL key, the instant truncated to the finest unit among them. A stage
    without ``_id`` is left to ``pipeline``, which refuses it as MongoDB does."""
    if "_id" not in group:
        return None
    selects: list[str] = []
    finest = _finest_units(group.get("_id"))
    date_keys: dict[str, int] = {}

    def key(expr):
        if isinstance(expr, str) and expr.startswith("$") and expr[1:] in columns:
            selects.append(f"{quote(column_name(expr[1:]))}")
            return ("field", len(selects) - 1)
        if isinstance(expr, Mapping) and len(expr) == 1:
            (op, arg), = expr.items()
            if op in DATE_PARTS and isinstance(arg, str) and arg[1:] in columns:
                if arg not in date_keys:
                    unit = finest[arg]
                    selects.append(f"hb_ms({quote(column_name(arg[1:]))}) / {unit} * {unit}")
                    date_keys[arg] = len(selects) - 1
                return ("date", date_keys[arg], op)
        if isinstance(expr, Mapping) and expr and not any(k.startswith("$") for k in expr):
            parts = {name: key(value) for name, value in expr.items()}
            return None if None in parts.values() else ("doc", parts)
        if expr is None or isinstance(expr, int | float) and not isinstance(expr, bool):
            return ("const", expr)
        return None

    shape = key(group.get("_id"))
    if shape is None:
        return None
    accumulators: dict[str, tuple[str, str]] = {}
    for name, spec in group.items():
        if name == "_id":
            continue
        if not isinstance(spec, Mapping) or len(spec) != 1:
            return None
        (op, arg), = spec.items()
        if op == "$sum" and isinstance(arg, int) and not isinstance(arg, bool):
            accumulators[name] = ("sum", f"count(*) * {arg}")
        elif op in ("$sum", "$min", "$max") and isinstance(arg, str) and arg.startswith("$") \
                and arg[1:] in columns:
            col = quote(column_name(arg[1:]))
            if op == "$sum":
                accumulators[name] = ("sum", f"sum(CASE WHEN typeof({col}) IN "
                                             f"('integer', 'real') THEN {col} END)")
            else:
                accumulators[name] = (op[1:], f"{op[1:]}({col})")
        else:
            return None
    return GroupPlan(selects, shape, accumulators)


def _finest_units(expr, units: dict | None = None) -> dict[str, int]:
    """For each field whose date parts ``expr`` reads, the smallest unit among them."""
    units = {} if units is None else units
    if isinstance(expr, Mapping):
        for op, arg in expr.items():
            if op in DATE_PARTS and isinstance(arg, str):
                unit = _UNITS.get(op, _DAY)
                units[arg] = min(units.get(arg, unit), unit)
            else:
                _finest_units(arg, units)
    return units


def _rebuild(shape, values):
    kind = shape[0]
    if kind == "field":
        return keys.decode(values[shape[1]])
    if kind == "date":
        ms = values[shape[1]]
        return None if ms is None else _date_part(shape[2], ms)
    if kind == "doc":
        return {name: _rebuild(part, values) for name, part in shape[1].items()}
    return shape[1]


@lru_cache(maxsize=65_536)
def _date_part(op: str, ms: int):
    """A date part of a group's time bucket: the rows of one bucket (every page and
    status of an hour) ask for the same few, so each is computed once."""
    return date_part(op, keys.from_ms(ms))


def _initial(kind: str, value):
    if kind == "sum":
        return value or 0
    return keys.decode(value)


def _fold(kind: str, current, value):
    if kind == "sum":
        return current + (value or 0)
    value = keys.decode(value)
    if value is None:
        return current
    if current is None:
        return value
    pick = min if kind == "min" else max
    return pick(current, value, key=sort_key)
