"""/team's API keys: listed (names, prefixes, sites, last use) to whoever may manage
them, made (the key shown once) and revoked by callbacks guarded by
``@requires("users")``. The store's keys are read and written by
``queries.accounts.keys`` alone."""

from __future__ import annotations

from dash import ALL, Input, Output, State, callback, ctx, dcc, html, no_update

from components import message
from components.apikeys import key_table, keys_card, new_key
from dashboard.authority import refusal, requires
from dashboard.feedback import describe
from dashboard.services import get_services
from queries.accounts import keys
from queries.errors import HitboardError
from queries.stats.sites import registered_sites

READ_ONLY = ("This server is read-only (HITBOARD_READONLY): manage keys with "
             "`hitboard api-key` on its host.")


def not_allowed() -> str | None:
    """Why this viewer may not manage keys, or None when they may."""
    if get_services().settings.readonly:
        return READ_ONLY
    refused = refusal("users")
    return refused.reason if refused else None


def section(disabled: bool) -> html.Div:
    try:
        sites = [] if disabled else [s.name for s in registered_sites(get_services().db)]
    except Exception:                # a failing store: the list says why
        sites = []
    return html.Div([keys_card(sites, disabled), dcc.Store(id="team-keys-changed")])


def register_key_callbacks() -> None:
    """Declare the keys' callbacks (called as Dash loads the page, as History's)."""
    callback(Output("team-keys-list", "children"), Input("team-keys-changed", "data"))(
        show_keys)
    callback(Output("team-key-status", "children"),
             Output("team-keys-changed", "data", allow_duplicate=True),
             Output("team-key-name", "value"),
             Input("team-key-create", "n_clicks"),
             State("team-key-name", "value"), State("team-key-sites", "value"),
             prevent_initial_call=True)(create)
    callback(Output("team-key-status", "children", allow_duplicate=True),
             Output("team-keys-changed", "data", allow_duplicate=True),
             Input({"type": "team-key-revoke", "index": ALL}, "n_clicks"),
             prevent_initial_call=True)(revoke)


def show_keys(_changed):
    """The keys, to whoever may manage them (a read: not guarded, but not shown)."""
    reason = refusal("users")
    if reason is not None:
        return message(reason.reason, "info")
    try:
        found = keys.listed(get_services().db)
    except Exception as exc:
        return message(describe(exc), "warning")
    rows = [{"name": k.name, "prefix": f"{keys.SCHEME}{k.prefix}",
             "sites": ", ".join(k.sites) if k.sites else "every site",
             "created": k.created.strftime("%Y-%m-%d %H:%M UTC"),
             "last_used": k.last_used.strftime("%Y-%m-%d %H:%M UTC") if k.last_used
             else "never"} for k in found]
    return key_table(rows, not_allowed() is not None)


@requires("users", refused=lambda reason: (message(reason, "warning"), no_update,
                                           no_update))
def create(_clicks, name, sites):
    if get_services().settings.readonly:
        return message(READ_ONLY, "warning"), no_update, no_update
    try:
        key = keys.create(get_services().db, name, sites or [])
    except HitboardError as exc:
        return message(str(exc), "warning"), no_update, no_update
    return new_key(key, name.strip()), key[:12], ""


@requires("users", refused=lambda reason: (message(reason, "warning"), no_update))
def revoke(clicks):
    if not any(clicks or []) or not isinstance(ctx.triggered_id, dict):
        return no_update, no_update
    name = ctx.triggered_id.get("index")
    if not isinstance(name, str) or not keys.revoke(get_services().db, name):
        return message("No such key (revoked already?).", "warning"), no_update
    return message(f"Key {name} revoked: it reads nothing from now on.", "info"), \
        f"revoked {name}"
