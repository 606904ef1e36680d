"""The top bar's account control: "Sign in" for a visitor, "Signed in · Sign out" for
the admin, a warning badge when the server lets everyone change its state. All three are
always in the page, the ones that do not apply hidden: the callbacks of the other two
then still find their components."""

from __future__ import annotations

from dash import dcc, html

STATES = ("visitor", "admin", "user", "open", "none")


def account_box(state: str, name: str = "") -> html.Div:
    """``state``: visitor (may sign in), admin (signed in with the admin secret), user
    (signed in as ``name``), open (everyone may change state) or none (nothing to sign
    in to)."""
    if state not in STATES:
        raise ValueError(f"unknown account state {state!r}")
    return html.Div(id="account", className="account", **{"data-state": state}, children=[
        html.Details(id="account-signin-box", className="account-signin",
                     hidden=state != "visitor", children=[
            html.Summary("Sign in", className="account-summary"),
            html.Div(className="account-panel", children=[
                html.Label(htmlFor="account-secret", className="hint", children=[
                    "The sign-in link ", html.Code("hitboard serve"), " printed (or ",
                    html.Code("hitboard signin-link"), "), or HITBOARD_ADMIN_TOKEN: "
                    "you stay on this page"]),
                html.Div(className="account-row", children=[
                    dcc.Input(id="account-secret", type="password", autoComplete="off",
                              debounce=False, placeholder="link or secret",
                              className="account-input"),
                    html.Button("Sign in", id="account-signin", n_clicks=0, className="btn"),
                ]),
                html.Div(id="account-status", className="hint", role="status"),
            ]),
        ]),
        html.Div(className="account-in", hidden=state not in ("admin", "user"), children=[
            html.Span(f"Signed in as {name}" if state == "user" else "Signed in",
                      className="account-who", title=name or None),
            html.Button("Sign out", id="account-signout", n_clicks=0,
                        className="btn btn-small"),
            html.Button("Sign out everywhere", id="account-signout-all", n_clicks=0,
                        className="btn btn-small", hidden=state != "user",
                        title="End this user's sessions in every browser"),
        ]),
        html.Span("Open admin", className="account-open", hidden=state != "open",
                  title="HITBOARD_OPEN_ADMIN is on: anyone who reaches this server can "
                        "change its state"),
    ])
