"""Tables sent as one element's data and drawn by the browser (``assets/statictable.js``).

Dash's renderer pays for every element a callback adds with every element already on
the page (each new one dispatches once and every mounted one re-runs its selector): the
Data page's 550 elements took 1.3 to 3 s to appear after the server had answered. A
table here is one ``html.Div`` whose ``data-table`` holds its cells as JSON; the script
builds the ``<table>`` with ``textContent`` (text, never markup) and the same classes,
spans and ``data-label`` (a phone shows each row as a card naming its columns).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from dash import html


@dataclass(frozen=True)
class Cell:
    """One cell: its lines of text, classes, a small note on a line of its own
    (``hint``), its column's name for the phone layout (``label``) and its spans."""

    lines: tuple[str, ...]
    classes: str = ""
    hint: str = ""
    label: str = ""
    rowspan: int | None = None
    colspan: int | None = None

    def spec(self) -> dict:
        found = {"t": list(self.lines), "c": self.classes, "h": self.hint, "l": self.label,
                 "r": self.rowspan, "s": self.colspan}
        return {k: v for k, v in found.items() if v not in ("", None)}


def cell(text, classes: str = "", **options) -> Cell:
    """A cell of ``text`` (a string, or lines)."""
    lines = (text,) if isinstance(text, str) else tuple(text)
    return Cell(tuple(str(line) for line in lines), classes, **options)


def static_table(head: Sequence[str], rows: Sequence[Sequence[Cell]],
                 table_id: str | None = None,
                 classes: str = "totals stack-on-phone") -> html.Div:
    """``rows`` of cells under ``head``, as one element (see the module doc); a cell
    without a label takes its column's name."""
    spec = {"class": classes, "head": list(head),
            "rows": [[c.spec() for c in row] for row in _labelled(head, rows)]}
    props = {"id": table_id} if table_id else {}
    return html.Div(className="static-table", **props,
                    **{"data-table": json.dumps(spec, ensure_ascii=False)})


def _labelled(head: Sequence[str], rows: Sequence[Sequence[Cell]]) -> list[list[Cell]]:
    """The cells, each unlabelled one named after its column: a column a cell above
    still spans (``rowspan``) is skipped, as the browser places them."""
    spanned: dict[int, int] = {}             # column: rows it is still taken
    out = []
    for row in rows:
        column, cells = 0, []
        for c in row:
            while spanned.get(column, 0) > 0:
                column += 1
            if not c.label and column < len(head):
                c = Cell(c.lines, c.classes, c.hint, head[column], c.rowspan, c.colspan)
            for taken in range(column, column + (c.colspan or 1)):
                spanned[taken] = c.rowspan or 1
            column += c.colspan or 1
            cells.append(c)
        spanned = {k: v - 1 for k, v in spanned.items() if v > 1}
        out.append(cells)
    return out


def table_cells(table: html.Div) -> list[list[dict]]:
    """The rows a static table holds (for tests and readers): each cell's spec."""
    return json.loads(getattr(table, "data-table"))["rows"]
