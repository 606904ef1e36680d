"""/team: an admin manages who reads this server. Today it holds the API keys
(``keys.py``, its own layout piece and callbacks); the users' section comes beside it.
"""

from __future__ import annotations

import dash
import flask
from dash import html

from components import message
from dashboard.pages.team import keys

dash.register_page(__name__, path="/team", name="Team", title="hitboard · team", order=17)
keys.register_key_callbacks()


def layout(**_query):
    reason = keys.not_allowed() if flask.has_request_context() else None
    return html.Div(className="page page-team", children=[
        message(reason, "info") if reason else None,
        keys.section(reason is not None),
    ])
