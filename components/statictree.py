"""Any card of plain HTML sent as one element's data and drawn by the browser
(``assets/statictree.js``), as ``statictable`` does for tables.

Dash's renderer pays for every element a callback adds with every element already on
the page: History's panels and KPI cards, 720 elements, took 1.5 to 3 s to appear after
the server had answered, and twice as long with twice as many. :func:`static` takes a
tree built as usual from ``dash.html`` elements and ``dcc.Link`` (the panels, the KPI
cards, the filter chip keep their builders) and turns it into one ``html.Div`` whose
``data-tree`` holds it as JSON; the script builds the elements with ``textContent``
(text, never markup), the attributes of :data:`ATTRIBUTES` and a link's ``href`` only
when it stays on this site. A link is drawn as ``<a data-link>``: a click on it moves
as ``dcc.Link`` does (``assets/inplace.js``).
"""

from __future__ import annotations

import json
import numbers

from dash import dcc, html
from dash.development.base_component import Component

# The props kept, by their HTML name; ``data-*`` and ``aria-*`` are kept too.
ATTRIBUTES = {"id": "id", "className": "class", "title": "title", "colSpan": "colspan",
              "rowSpan": "rowspan", "role": "role", "href": "href", "style": "style"}
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
    return [tag, attributes, *nodes(getattr(component, "children", None))]


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
