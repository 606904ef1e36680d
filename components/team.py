"""The Team page's pieces: the users as a table, the form that adds one and the form
that changes one (role, sites, password, sign out everywhere, removal). Every name and
site is a child string, rendered as text; ``disabled`` greys the forms out for whoever
may not manage users (the page says why)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dash import dcc, html

ROLE_OPTIONS = [{"label": "Viewer: reads its sites", "value": "viewer"},
                {"label": "Admin: every action", "value": "admin"}]
SITES_HINT = "A viewer's sites; none: every site."
PASSWORD_HINT = "10 to 1,024 characters."


def users_table(rows: Sequence[Mapping], table_id: str = "team-users") -> html.Table:
    """One row per user: ``name``, ``role``, ``sites`` (words) and ``created``."""
    titles = ("User", "Role", "Sites", "Added")
    head = html.Tr([html.Th(title) for title in titles])
    body = [html.Tr([html.Td(value, **{"data-label": title}) for title, value in zip(
        titles, (row["name"], row["role"], row["sites"], row["created"] or ""), strict=True)])
        for row in rows]
    return html.Table(id=table_id, className="totals stack-on-phone",
                      children=[html.Thead(head), html.Tbody(body)])


def _field(label: str, control, hint: str | None = None) -> html.Div:
    """A labelled control as the Sites page and the API keys draw one."""
    return html.Div(className="site-field", children=[
        html.Label(label, htmlFor=control.id, className="field-label"), control,
        html.Span(hint, className="hint") if hint else None])


def _buttons(*buttons) -> html.Div:
    return html.Div(className="toolbar", children=list(buttons))


def add_user_form(disabled: bool) -> html.Section:
    return html.Section(className="card", children=[
        html.H2("Add a user", className="card-title"),
        html.Div(className="site-form", children=[
            _field("Name", dcc.Input(id="team-add-name", type="text", maxLength=64,
                                     autoComplete="off", disabled=disabled,
                                     className="text-input")),
            _field("Role", dcc.Dropdown(id="team-add-role", options=ROLE_OPTIONS,
                                        value="viewer", clearable=False,
                                        disabled=disabled)),
            _field("Sites", dcc.Dropdown(id="team-add-sites", multi=True, options=[],
                                         disabled=disabled), SITES_HINT),
            _field("Password", dcc.Input(id="team-add-password", type="password",
                                         autoComplete="new-password", disabled=disabled,
                                         className="text-input"), PASSWORD_HINT),
        ]),
        _buttons(html.Button("Add user", id="team-add", n_clicks=0,
                             className="btn btn-primary", disabled=disabled)),
        html.Div(id="team-add-status", role="status", className="status-line"),
    ])


def change_user_form(disabled: bool) -> html.Section:
    return html.Section(className="card", children=[
        html.H2("Change a user", className="card-title"),
        html.P("Each change signs the user out everywhere.", className="hint"),
        html.Div(className="site-form", children=[
            _field("User", dcc.Dropdown(id="team-user", options=[], disabled=disabled)),
        ]),
        html.Div(className="site-form", children=[
            _field("Role", dcc.Dropdown(id="team-role", options=ROLE_OPTIONS,
                                        disabled=disabled), "Empty: unchanged."),
            _field("Sites", dcc.Dropdown(id="team-sites", multi=True, options=[],
                                         disabled=disabled),
                   "Empty: unchanged, unless Every site is ticked."),
        ]),
        _buttons(dcc.Checklist(id="team-all-sites", options=[{"label": " Every site",
                                                              "value": "all"}],
                               value=[], inputStyle={"marginRight": ".3rem"}),
                 html.Button("Save role and sites", id="team-save", n_clicks=0,
                             className="btn", disabled=disabled)),
        html.Div(className="site-form team-gap", children=[
            _field("New password", dcc.Input(id="team-password", type="password",
                                             autoComplete="new-password",
                                             disabled=disabled, className="text-input"),
                   PASSWORD_HINT),
        ]),
        _buttons(html.Button("Set password", id="team-passwd", n_clicks=0, className="btn",
                             disabled=disabled),
                 html.Button("Sign out everywhere", id="team-signout", n_clicks=0,
                             className="btn", disabled=disabled)),
        html.Div(className="danger-row team-gap", children=[
            html.Div([html.Label("Type the user's name to remove it",
                                 htmlFor="team-confirm", className="field-label"),
                      dcc.Input(id="team-confirm", type="text", maxLength=64,
                                autoComplete="off", disabled=disabled,
                                className="text-input")]),
            html.Button("Remove user", id="team-remove", n_clicks=0,
                        className="btn btn-danger", disabled=disabled)]),
        html.Div(id="team-change-status", role="status", className="status-line"),
    ])
