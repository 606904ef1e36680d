"""Messages in the page: what went wrong, and what to do when there is no data yet."""

from __future__ import annotations

from dash import dcc, html


def message(text: str, kind: str = "error") -> html.Div:
    """A one-line notice; ``kind`` is error, warning or info."""
    return html.Div(text, className=f"notice notice-{kind}", role="alert")


def empty_state(store: str) -> html.Div:
    """Shown while the store holds no hits at all: the three ways to get some."""
    return html.Div(className="empty-state", children=[
        html.H2("No traffic recorded yet"),
        html.P(["This dashboard reads ", html.Code(store), ". Get data into it:"]),
        html.Ul([
            html.Li(["Start the ", html.B("load generator"),
                     ": its page in this dashboard, or ", html.Code("hitboard serve --demo"),
                     "."]),
            html.Li(["Import access logs: ", html.Code("hitboard ingest FILE"), "."]),
            html.Li(["Count real visits with the ", html.B("/hit beacon"),
                     " on your site's pages (see the README)."]),
        ]),
        dcc.Markdown("Charts appear here by themselves as soon as hits arrive.",
                     className="muted"),
    ])
