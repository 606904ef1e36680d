"""/team: an admin manages who reads this server: the users who sign in (``users``, as
``hitboard user`` keeps them) and the API keys (``keys``); each section is its own
layout piece and callbacks. Only admins see and change them; anyone else sees why."""

from __future__ import annotations

import dash
import flask
from dash import dcc, html

from components import message
from components.team import add_user_form, change_user_form
from dashboard.pages.team import keys, users

PATH = "/team"
dash.register_page(__name__, path=PATH, name="Team", title="hitboard · team", order=17)
users.register_user_callbacks()
keys.register_key_callbacks()


def layout(**_query):
    reason = users.not_allowed() if flask.has_request_context() else None
    disabled = reason is not None
    return html.Div(className="page page-team", children=[
        message(reason, "info") if reason else None,
        html.Section(className="card", children=[
            html.H2("Users", className="card-title"),
            html.Div(id="team-list", children=html.P("Reading the users…", className="hint")),
        ]),
        add_user_form(disabled),
        change_user_form(disabled),
        dcc.Store(id="team-changed"),
        keys.section(disabled),
    ])
