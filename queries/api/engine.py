"""A Stats API question answered: checked (``parse``), counted
(``queries.reads.stats_api``), ordered, paged and shaped as Plausible answers::

    {"results": [{"dimensions": [...], "metrics": [...]}], "meta": {...}, "query": {...}}

``meta`` says where the figures were counted and what is approximate about them.
"""

from __future__ import annotations

import datetime as dt

from ..reads.stats_api import answer
from ..reads.stats_grid import answer_grid
from .parse import Shape, parse


def run_query(db, body: object, events_ttl_days: int,
              now: dt.datetime | None = None) -> dict:
    """The answer to ``body`` (a decoded JSON object); a ``QueryError`` (or another
    ``HitboardError``) names what is wrong with it."""
    query, shape = parse(db, body, now)
    found = (answer_grid if query.dimensions else answer)(db, query, events_ttl_days)
    rows = _ordered(found.rows, shape, query.metrics, shape.echoed["dimensions"])
    page = rows[shape.offset:shape.offset + shape.limit]
    meta: dict = {"source": found.source, "approximate": found.notes,
                  "imports_included": False}
    if shape.imports:
        meta["imports_skip_reason"] = "no imported data"
    if shape.total_rows:
        meta["total_rows"] = len(rows)
    return {"results": [{"dimensions": list(values),
                         "metrics": [figures[m] for m in query.metrics]}
                        for values, figures in page],
            "meta": meta, "query": shape.echoed}


def _ordered(rows: list, shape: Shape, metrics: tuple[str, ...],
             dimensions: list[str]) -> list:
    """The rows in ``order_by``'s order (stable: ties keep the read's, which is the
    default: time ascending, else the first count descending); None last."""
    for name, descending in reversed(shape.order_by):
        if name in metrics:
            def key(row, name=name):
                return row[1][name]
        else:
            index = dimensions.index(name)

            def key(row, index=index):
                return row[0][index]
        present = [row for row in rows if key(row) is not None]
        missing = [row for row in rows if key(row) is None]
        rows = sorted(present, key=key, reverse=descending) + missing
    return rows
