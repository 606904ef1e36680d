"""The shard-key advice as HTML: a summary, one table row per candidate key (cells wrap;
on a phone each row becomes a card) and the recommendation as prose, so nothing hides
behind a scrollbar. The words come from ``queries.sharding.text``, through the page."""

from __future__ import annotations

from collections.abc import Sequence

from dash import html


def shard_advice(summary: str, head: Sequence[str], rows: Sequence[Sequence[str]],
                 notes: Sequence[str], advice: Sequence[str],
                 element_id: str | None = None) -> html.Div:
    props = {"id": element_id} if element_id else {}
    body = [html.Tr([html.Td(html.Code(row[0]), **{"data-label": head[0]}),
                     *(html.Td(text, className="num", **{"data-label": label})
                       for label, text in zip(head[1:], row[1:], strict=True))])
            for row in rows]
    return html.Div(className="shard-advice", **props, children=[
        html.P(summary[:1].upper() + summary[1:]),
        html.Table(className="totals stack-on-phone", children=[
            html.Thead(html.Tr([html.Th(h) for h in head])), html.Tbody(body)]),
        *(html.P(line, className="hint") for line in notes),
        html.P(html.Strong(advice[0])),
        html.Ul([html.Li(line) for line in advice[1:]]) if advice[1:] else None,
    ])
