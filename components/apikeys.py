"""The /team page's API keys: the table of keys (never a key, only its prefix), the
form that makes one, and the new key shown once.

Rows come in as plain dicts (the page computes them); every name and site is a child
string, so React renders it as text. ``disabled`` greys the controls out for someone
who may not manage keys: shown, not hidden, and the page says why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dash import dcc, html

COLUMNS = ("Name", "Key", "Sites", "Created", "Last used", "")
NAME_HINT = "What the key is for, e.g. ci-report (1 to 64 characters)."
SITES_HINT = "The sites it reads; none chosen: every site."


def keys_card(sites: Sequence[str], disabled: bool) -> html.Section:
    return html.Section(className="card", id="team-keys", children=[
        html.H2("API keys", className="card-title"),
        html.P(["Scripts read the Stats API (", html.Code("POST /api/v2/query"),
                ") with a key: ", html.Code("Authorization: Bearer hbk_…"),
                ". A key reads its sites and nothing else, 600 requests an hour."],
               className="hint"),
        html.Div(id="team-keys-list", children=html.P("Reading the keys…",
                                                      className="hint")),
        html.H3("New key", className="card-title"),
        html.Div(className="site-form", children=[
            _field("Name", "team-key-name", NAME_HINT, dcc.Input(
                id="team-key-name", type="text", maxLength=64, autoComplete="off",
                placeholder="ci-report", className="text-input", disabled=disabled)),
            _field("Sites", "team-key-sites", SITES_HINT, dcc.Dropdown(
                id="team-key-sites", options=list(sites), multi=True, disabled=disabled)),
        ]),
        html.Div(className="toolbar", children=[
            html.Button("Create key", id="team-key-create", n_clicks=0,
                        className="btn btn-primary", disabled=disabled),
        ]),
        html.Div(id="team-key-status", role="status", className="status-line"),
    ])


def key_table(rows: Sequence[Mapping], disabled: bool) -> html.Table | html.P:
    """One row per key: ``name``, ``prefix``, ``sites``, ``created``, ``last_used``."""
    if not rows:
        return html.P("No API keys yet.", className="hint")
    return html.Table(className="totals stack-on-phone", id="team-keys-table", children=[
        html.Thead(html.Tr([html.Th(c) for c in COLUMNS])),
        html.Tbody([html.Tr([
            html.Td(row["name"]), html.Td(html.Code(f"{row['prefix']}…"), **_label(1)),
            html.Td(row["sites"], **_label(2)), html.Td(row["created"], **_label(3)),
            html.Td(row["last_used"], **_label(4)),
            html.Td(html.Button("Revoke", id={"type": "team-key-revoke",
                                              "index": row["name"]}, n_clicks=0,
                                className="btn btn-danger", disabled=disabled)),
        ]) for row in rows]),
    ])


def _label(column: int) -> dict:
    """The column's name, shown before the cell when a phone stacks the table."""
    return {"data-label": COLUMNS[column]}


def _field(label: str, control_id: str, hint: str, control) -> html.Div:
    return html.Div(className="site-field", children=[
        html.Label(label, htmlFor=control_id, className="field-label"),
        control,
        html.Span(hint, className="hint"),
    ])


def new_key(key: str, name: str) -> html.Div:
    """The key just made, shown this once, selectable to copy."""
    return html.Div(className="notice notice-info", role="status", children=[
        html.P(f"Key {name} made. Copy it now: it is shown this once."),
        dcc.Input(id="team-key-made", value=key, readOnly=True, className="text-input",
                  style={"width": "100%"}),
    ])
