"""The shard-key advice as HTML: a summary, one table row per candidate key (cells wrap;
on a phone each row becomes a card; the table is one element: ``statictable``) and the
recommendation as prose, so nothing hides behind a scrollbar. The words come from
``queries.sharding.text``, through the page."""

from __future__ import annotations

from collections.abc import Sequence

from dash import html

from .statictable import cell, static_table


def shard_advice(summary: str, head: Sequence[str], rows: Sequence[Sequence[str]],
                 notes: Sequence[str], advice: Sequence[str],
                 element_id: str | None = None) -> html.Div:
    props = {"id": element_id} if element_id else {}
    table = [[cell(row[0], "code-text"), *(cell(text, "num") for text in row[1:])]
             for row in rows]
    return html.Div(className="shard-advice", **props, children=[
        html.P(summary[:1].upper() + summary[1:]),
        static_table(head, table),
        *(html.P(line, className="hint") for line in notes),
        html.P(html.Strong(advice[0])),
        html.Ul([html.Li(line) for line in advice[1:]]) if advice[1:] else None,
    ])
