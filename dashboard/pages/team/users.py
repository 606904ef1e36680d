"""The Team page's users: listed for admins only; added, changed and removed by
callbacks guarded by ``@requires("users")``, each saying what it did or why not. Every
change to a user (role, sites, password, "Sign out everywhere", removal) bumps its
epoch, ending its sessions in every worker."""

from __future__ import annotations

import time

from dash import Input, Output, State, callback, ctx, html, no_update

from components import message
from components.team import users_table
from dashboard import reads
from dashboard.authority import refusal, requires
from dashboard.feedback import describe
from dashboard.services import get_services
from queries import accounts

READ_ONLY = ("This server is read-only (HITBOARD_READONLY): change users with "
             "`hitboard user` on its host.")


def not_allowed() -> str | None:
    """Why this principal may not manage users, or None when it may."""
    refused = refusal("users")
    if refused is not None:
        return refused.reason
    return READ_ONLY if get_services().settings.readonly else None


def _sites_words(user: accounts.User) -> str:
    if user.role == "admin" or user.sites is None:
        return "every site"
    return ", ".join(sorted(user.sites))


def show_users(_path, _changed):
    """The users and the sites to grant, for an admin; for anyone else, why not."""
    refused = refusal("users")
    if refused is not None:
        return message(refused.reason, "info"), [], [], []
    try:
        found = accounts.list_users(get_services().db)
        sites = reads.sites()
    except Exception as exc:
        return message(describe(exc)), [], [], []
    rows = [{"name": u.name, "role": u.role, "sites": _sites_words(u),
             "created": f"{u.created:%Y-%m-%d %H:%M} UTC" if u.created else None}
            for u in found]
    listing = users_table(rows) if rows else html.P("No user yet.", className="hint")
    return listing, [u.name for u in found], sites, sites


def _refused_add(reason: str):
    return message(reason, "warning"), no_update, no_update


@requires("users", refused=_refused_add)
def add(_clicks, name, role, sites, password):
    if get_services().settings.readonly:
        return message(READ_ONLY, "warning"), no_update, no_update
    try:
        added = accounts.add_user(get_services().db, name, role, password,
                                  sites if role == "viewer" and sites else None)
    except Exception as exc:
        return message(describe(exc)), no_update, no_update
    return message(f"Added {added.name} ({added.role}).", "info"), time.time(), ""


def _refused_change(reason: str):
    return message(reason, "warning"), no_update, no_update


@requires("users", refused=_refused_change)
def change(_save, _passwd, _signout, _remove, name, role, sites, all_sites, password,
           typed):
    """The button pressed, applied to the chosen user."""
    if get_services().settings.readonly:
        return message(READ_ONLY, "warning"), no_update, no_update
    db, button = get_services().db, ctx.triggered_id
    try:
        if not name:
            raise accounts.UserError("choose a user first")
        if button == "team-save":
            every = bool(all_sites) and "all" in all_sites
            accounts.set_user(db, name, role or None, None if every else (sites or None),
                              every)
            said = f"Saved {name}; signed out everywhere."
        elif button == "team-passwd":
            accounts.set_password(db, name, password)
            said = f"New password for {name}; signed out everywhere."
        elif button == "team-signout":
            accounts.bump_epoch(db, name)
            said = f"{name} is signed out everywhere."
        elif button == "team-remove":
            if typed != name:
                raise accounts.UserError(f"type {name} to remove it")
            accounts.remove_user(db, name)
            said = f"Removed {name}."
        else:
            return no_update, no_update, no_update
    except Exception as exc:
        return message(describe(exc)), no_update, no_update
    return message(said, "info"), time.time(), ""


def register_user_callbacks() -> None:
    """Declare the section's callbacks (called as Dash loads the page, which it does for
    every app: a module imported once would declare them for the first app only)."""
    callback(Output("team-list", "children"), Output("team-user", "options"),
             Output("team-add-sites", "options"), Output("team-sites", "options"),
             Input("url", "pathname"), Input("team-changed", "data"))(show_users)
    callback(Output("team-add-status", "children"), Output("team-changed", "data"),
             Output("team-add-password", "value"),
             Input("team-add", "n_clicks"), State("team-add-name", "value"),
             State("team-add-role", "value"), State("team-add-sites", "value"),
             State("team-add-password", "value"), prevent_initial_call=True)(add)
    callback(Output("team-change-status", "children"),
             Output("team-changed", "data", allow_duplicate=True),
             Output("team-password", "value"),
             Input("team-save", "n_clicks"), Input("team-passwd", "n_clicks"),
             Input("team-signout", "n_clicks"), Input("team-remove", "n_clicks"),
             State("team-user", "value"), State("team-role", "value"),
             State("team-sites", "value"), State("team-all-sites", "value"),
             State("team-password", "value"), State("team-confirm", "value"),
             prevent_initial_call=True)(change)
