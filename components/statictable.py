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
import numbers
from collections.abc import Sequence
from dataclasses import dataclass

from dash import dcc, html
from dash.development.base_component import Component


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


# -- Any card of plain HTML, as one element -------------------------------------------
# History's panels and KPI cards, 720 elements, took 1.5 to 3 s to appear after the
# server had answered, and twice as long with twice as many. ``static`` takes a tree
# built as usual from ``dash.html`` elements and ``dcc.Link`` (the panels, the KPI cards,
# the filter chip keep their builders) and turns it into one ``html.Div`` whose
# ``data-tree`` holds it as JSON; ``assets/statictree.js`` builds the elements with
# ``textContent`` (text, never markup), the attributes of ``ATTRIBUTES`` and a link's
# ``href`` only when it stays on this site. A link is drawn as ``<a data-link>``: a click
# on it moves as ``dcc.Link`` does (``assets/inplace.js``).
# The props kept, by their HTML name; ``data-*`` and ``aria-*`` are kept too.
ATTRIBUTES = {"id": "id", "className": "class", "title": "title", "colSpan": "colspan",
              "rowSpan": "rowspan", "role": "role", "href": "href", "style": "style"}
_PROPS = {html_name: prop for prop, html_name in ATTRIBUTES.items()}
ONE = "_one"      # an element whose only child was not in a list (the script ignores it)
TAGS = frozenset({"div", "span", "section", "p", "a", "h2", "h3", "h4", "ol", "ul", "li",
                  "table", "thead", "tbody", "tr", "th", "td", "small", "strong", "em",
                  "abbr", "br", "sup", "sub", "b", "i", "label", "time"})


def static(tree, box_id: str | None = None, classes: str = "") -> html.Div:
    """``tree`` (an element or a list of them) as one element the browser draws."""
    props = {"id": box_id} if box_id else {}
    spec = nodes(tree)
    return html.Div(className=f"static-tree {classes}".strip(), **props,
                    **{"data-tree": json.dumps(spec, ensure_ascii=False,
                                               separators=(",", ":"))})


def nodes(tree) -> list:
    """``tree`` as a list of nodes: text, or ``[tag, attributes, *children]``."""
    if tree is None or tree is False:
        return []
    if isinstance(tree, list | tuple):
        return [n for item in tree for n in nodes(item)]
    if isinstance(tree, str):
        return [tree]
    if isinstance(tree, numbers.Number):
        return [str(tree)]
    if isinstance(tree, Component):
        return [_element(tree)]
    raise TypeError(f"{type(tree).__name__} cannot be drawn as static HTML")


def _element(component: Component) -> list:
    if isinstance(component, dcc.Link):
        tag, attributes = "a", {"data-link": "1"}
    elif component._namespace == html.Div._namespace:
        tag, attributes = component._type.lower(), {}
    else:
        raise TypeError(f"{component._namespace}.{component._type} is not plain HTML")
    if tag not in TAGS:
        raise TypeError(f"<{tag}> is not drawn by statictree.js")
    for prop, value in component.to_plotly_json()["props"].items():
        if prop == "children" or value is None:
            continue
        name = ATTRIBUTES.get(prop) or (prop if prop.startswith(("data-", "aria-")) else None)
        if name is None:
            continue
        attributes[name] = value if name == "style" else str(value)
    children = getattr(component, "children", None)
    if isinstance(children, Component):
        attributes[ONE] = 1          # not a list: read back as written (``rebuilt``)
    return [tag, attributes, *nodes(children)]


def rebuilt(box: html.Div) -> list:
    """The elements a static element holds, as Dash elements again (for tests and
    readers: ``rebuilt(out["kpis"])[0].children[1].id``); a link is a ``dcc.Link``."""
    return [_rebuilt(node) for node in tree_of(box)]


def _rebuilt(node):
    if isinstance(node, str):
        return node
    tag, attributes, *children = node
    props = {_PROPS.get(name, name): value for name, value in attributes.items()
             if name not in ("data-link", ONE)}
    inner = [_rebuilt(child) for child in children]
    # One text, or one element not in a list, as written; else a list.
    alone = len(inner) == 1 and (isinstance(inner[0], str) or ONE in attributes)
    shown = inner[0] if alone else (inner or None)
    if "data-link" in attributes:
        return dcc.Link(children=shown, **props)
    return getattr(html, tag.capitalize())(children=shown, **props)


def tree_of(box: html.Div) -> list:
    """The nodes a static element holds (for tests and readers)."""
    return json.loads(getattr(box, "data-tree"))


def text_of(box_or_nodes) -> str:
    """Every text of a static element, in order, joined by spaces (for tests)."""
    found = tree_of(box_or_nodes) if isinstance(box_or_nodes, html.Div) else box_or_nodes
    parts = []

    def walk(items):
        for item in items:
            if isinstance(item, str):
                parts.append(item)
            else:
                walk(item[2:])

    walk(found)
    return " ".join(parts)


def find(box_or_nodes, element_id: str) -> list | None:
    """The node of ``element_id`` inside a static element (for tests)."""
    found = tree_of(box_or_nodes) if isinstance(box_or_nodes, html.Div) else box_or_nodes
    for item in found:
        if isinstance(item, str):
            continue
        if item[1].get("id") == element_id:
            return item
        inner = find(item[2:], element_id)
        if inner is not None:
            return inner
    return None
