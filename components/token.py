"""The admin token field of the pages whose actions a server may protect."""

from __future__ import annotations

from dash import dcc, html


def token_field(component_id: str, required: bool) -> html.Label:
    """A password input kept in the tab's session storage (so it is typed once per tab
    and page), hidden when the server asks for no token."""
    return html.Label(className="hint", hidden=not required, children=[
        "Admin token", html.Br(),
        dcc.Input(id=component_id, type="password", autoComplete="off", debounce=False,
                  persistence=True, persistence_type="session", placeholder="required",
                  style={"width": "12em"}),
    ])
