"""The share links of ``/sites?edit=NAME``: listed, made and revoked as ``hitboard share``
does, each change guarded by ``@requires("shares")``. The list names links by their
first characters only; a new link is shown once, as the CLI prints it."""

from __future__ import annotations

import flask
from dash import ALL, Input, Output, State, callback, ctx, no_update

from components import message
from components.sites import new_share, share_list
from dashboard.authority import refusal, requires
from dashboard.authority.sessions import base_url
from dashboard.feedback import describe
from dashboard.pages.sites.clicks import clicked, refused
from dashboard.services import get_services
from queries import shares

MAX_ORIGINS_TEXT = 2000


def shares_not_allowed() -> str | None:
    """Why this viewer may not manage share links, or None."""
    if get_services().settings.readonly:
        return ("This server is read-only (HITBOARD_READONLY): make share links with "
                "`hitboard share` on its host.")
    refused = refusal("shares")
    return refused.reason if refused else None


def _link(token: str) -> str:
    settings = get_services().settings
    if settings.public_url:
        base = settings.public_url
    elif flask.has_request_context():
        base = flask.request.host_url
    else:
        base = base_url(settings)
    return f"{base.rstrip('/')}/share/{token}"


def _rows(site: str) -> list[dict]:
    return [{"prefix": s.prefix, "filter": s.filter_text, "password": s.locked,
             "framed": ", ".join(s.frame_ancestors)}
            for s in shares.listed(get_services().db) if s.site == site]


def register_share_callbacks() -> None:
    @callback(Output("sites-share-list", "children"), Input("sites-edit-name", "data"),
              Input("sites-share-status", "children"))
    def show_shares(name, _status):
        """The site's links, for those who may manage them."""
        if not name:
            return None
        reason = shares_not_allowed()
        if reason is not None:
            return None
        try:
            return share_list(_rows(name), False)
        except Exception as exc:
            return message(describe(exc))

    @callback(
        Output("sites-share-status", "children"),
        Output("sites-share-password", "value"),
        Input("sites-share-create", "n_clicks"),
        Input({"type": "sites-share-revoke", "index": ALL}, "n_clicks"),
        State("sites-edit-name", "data"),
        State("sites-share-filter", "value"),
        State("sites-share-password", "value"),
        State("sites-share-origins", "value"),
        prevent_initial_call=True,
    )
    @requires("shares", refused=refused)
    def change_shares(_create, _revokes, name, filter_text, password, origins):
        """Make a link from the form, or revoke the one whose button was clicked."""
        if not clicked() or not name:
            return no_update, no_update
        db = get_services().db
        trigger = ctx.triggered_id
        try:
            if isinstance(trigger, dict):
                shares.revoke(db, str(trigger["index"]))
                return message(f"Revoked the link {trigger['index']}….", "info"), no_update
            token, _ = shares.create(
                db, name, (filter_text or "").strip() or None, password or None,
                tuple(str(origins or "")[:MAX_ORIGINS_TEXT].replace(",", " ").split()))
        except Exception as exc:
            return message(describe(exc)), no_update
        return new_share(_link(token)), ""
