"""Signing in and out from the top bar of every page.

Sign in sends what was pasted in a callback (JSON, same-origin: see ``authority``): the
sign-in link ``hitboard serve`` printed, or the admin secret. When it signs in, the
callback's response sets the session cookie and the page reloads where it is, so every
page's controls are drawn for the admin. Sign out clears the cookie the same way. The
link opened as it is does the same, landing on the page this browser last showed.
"""

from __future__ import annotations

import time

import dash
import flask
from dash import Input, Output, State, ctx, no_update

from components.account import account_box
from queries import accounts

from .authority import who
from .authority.principal import erase_session, secret, typed_refusal, write_session
from .services import get_services


def account_area():
    """What the top bar shows about the viewer: nothing to sign in to on a read-only
    server, one without an admin secret, or outside a request (Dash checks the layout
    as the app is built)."""
    state = _state()
    return account_box(state, who().name if state == "user" else "")


def _state() -> str:
    if not flask.has_request_context():
        return "none"
    settings = get_services().settings
    if who().user:
        return "user"
    if settings.readonly:
        return "none"
    if settings.open_admin:
        return "open"
    if not secret():
        return "none"
    return "admin" if who().signed_in else "visitor"


def sign_in(_clicks, _submits, typed):
    refused = typed_refusal(typed)
    if refused is not None:
        return refused.reason, no_update
    write_session(ctx.response)
    return "Signed in.", time.time()


def sign_out(_clicks):
    erase_session(ctx.response)
    return time.time()


def sign_out_everywhere(_clicks):
    """A user ends its sessions in every browser (its epoch moves on), this one too."""
    principal = who()
    if principal.user:
        accounts.bump_epoch(get_services().db, principal.name)
    erase_session(ctx.response)
    return time.time()


def register_account_callbacks(app: dash.Dash) -> None:
    app.callback(
        Output("account-status", "children"),
        Output("account-done", "data", allow_duplicate=True),
        Input("account-signin", "n_clicks"),
        Input("account-secret", "n_submit"),
        State("account-secret", "value"),
        prevent_initial_call=True,
    )(sign_in)
    app.callback(
        Output("account-done", "data", allow_duplicate=True),
        Input("account-signout", "n_clicks"),
        prevent_initial_call=True,
    )(sign_out)
    app.callback(
        Output("account-done", "data", allow_duplicate=True),
        Input("account-signout-all", "n_clicks"),
        prevent_initial_call=True,
    )(sign_out_everywhere)
    app.clientside_callback(
        "function(done) { if (done) { window.location.reload(); } return null; }",
        Output("account-reloaded", "data"),
        Input("account-done", "data"),
        prevent_initial_call=True,
    )
