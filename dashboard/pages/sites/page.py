"""Sites: the registry the ``/hit`` beacon counts by, as ``hitboard site`` keeps it.

``/sites`` lists every registered site (who registered it and when, its origins, zone,
rule for hits without a user agent, last hit) and adds one; ``/sites?edit=NAME`` is a
site's own page: its settings, its tracking tag, and removing it (the registration
alone, or with all its data once its name is typed). Both views are always in the
layout, the one not shown hidden, so every callback finds its components.

Each change is a callback guarded by ``@requires("sites")``; a visitor sees the
controls disabled and why. The registry validates every value (``dashboard.pages.sites.view``
hands the form's text to it), and a refusal is a message in the page.
"""

from __future__ import annotations

import time

import dash
import flask
from dash import (
    ALL,
    Input,
    Output,
    State,
    callback,
    clientside_callback,
    ctx,
    dcc,
    html,
    no_update,
)

from components import message
from components.sites import (
    add_form,
    danger_zone,
    goal_list,
    goals_card,
    settings_form,
    shares_card,
    site_summary,
    sites_table,
)
from components.sites import tracking_tag as tag_section
from dashboard.authority import refusal, requires
from dashboard.authority.scope import check_site
from dashboard.authority.sessions import base_url
from dashboard.feedback import describe
from dashboard.pages.sites import view as view
from dashboard.pages.sites.alerts_section import (
    alerts_card,
    alerts_not_allowed,
    register_alert_callbacks,
)
from dashboard.pages.sites.clicks import clicked, refused
from dashboard.pages.sites.reports_section import (
    register_report_callbacks,
    reports_card,
    reports_not_allowed,
)
from dashboard.pages.sites.shares import register_share_callbacks, shares_not_allowed
from dashboard.services import get_services
from dashboard.shell import time_zones
from dashboard.state import ShellState, from_kwargs, parse_search

dash.register_page(__name__, path=view.PATH, name="Sites", title="hitboard · sites", order=15)
register_share_callbacks()
register_alert_callbacks()
register_report_callbacks()

READ_ONLY = ("This server is read-only (HITBOARD_READONLY): change sites with "
             "`hitboard site` on its host.")


def not_allowed() -> str | None:
    """Why this viewer may not change sites, or None when they may."""
    if get_services().settings.readonly:
        return READ_ONLY
    refused = refusal("sites")
    return refused.reason if refused else None


def layout(**query_kwargs):
    query = from_kwargs(query_kwargs)
    name = view.edit_name(query)
    reason = not_allowed() if flask.has_request_context() else None
    disabled = reason is not None
    return html.Div(className="page page-sites", children=[
        message(reason, "info") if reason else None,
        html.Div(id="sites-listing", hidden=name is not None,
                 children=_listing(disabled, zones=() if name else time_zones())),
        html.Div(id="sites-editing", hidden=name is None,
                 children=_editing(name, query, disabled)),
        dcc.Store(id="sites-changed"),
        dcc.Store(id="sites-edit-name", data=name),
    ])


def _listing(disabled: bool, zones) -> list:
    return [
        html.Section(className="card", children=[
            html.Div(className="card-head sites-head", children=[
                html.H2("Registered sites", className="card-title"),
                html.Label("Filter sites by name", htmlFor="sites-filter",
                           className="visually-hidden"),
                dcc.Input(id="sites-filter", type="search", placeholder="Filter by name",
                          debounce=True, autoComplete="off", className="text-input",
                          maxLength=64),
            ]),
            html.P(["The ", html.Code("/hit"), " beacon counts these sites only; "
                    "a log ingest and the load generator register theirs."],
                   className="hint"),
            html.Div(id="sites-list", children=html.P("Reading the registry…",
                                                      className="hint")),
        ]),
        add_form(zones, disabled),
    ]


def _editing(name: str | None, query, disabled: bool) -> list:
    back = dcc.Link("← All sites", href=view.list_href(query), id="sites-back",
                    className="back-link")
    if name is None:          # the list is shown
        return [back, html.Div(id="sites-edit-status"), _no_settings()]
    tz = view.zone_shown(ShellState.from_query(query).tz)
    check_site(name)
    try:
        site = view.edited(get_services().db, name)
    except Exception as exc:  # a failing store: a message, not a traceback
        site = view.Edited(name, None, describe(exc))
    settings = site.settings
    if settings is None:
        return [back, html.Div(id="sites-edit-status", children=message(site.problem, "warning")),
                _no_settings()]
    return [
        back,
        site_summary(settings.name, settings.synthetic, view.via_words(settings.via),
                     _when(settings.since, tz), _when(site.last, tz),
                     view.history_href(settings.name, query)),
        html.Div(id="sites-edit-status"),
        html.Div(id="sites-settings", className="page", children=[
            settings_form(settings.tz, settings.unknown_agents, settings.origins,
                          time_zones(), disabled, settings.visit_minutes,
                          settings.primary_source),
            goals_card(disabled),
            shares_card(shares_not_allowed() is not None),
            alerts_card(alerts_not_allowed() is not None),
            reports_card(reports_not_allowed() is not None),
            tag_section(view.script_url(_base()), settings.name),
            danger_zone(settings.name, disabled),
        ]),
    ]


def _no_settings() -> html.Div:
    """The settings' components, empty and hidden, for the callbacks to find."""
    return html.Div(id="sites-settings", hidden=True, children=[
        settings_form(None, "human", (), (), True), goals_card(True), shares_card(True),
        alerts_card(True), reports_card(True), danger_zone("", True)])


def _when(moment, tz: str) -> str | None:
    text = view.when(moment, tz)
    return text and f"{text} ({tz})"


def _base() -> str:
    settings = get_services().settings
    if settings.public_url:
        return settings.public_url
    if flask.has_request_context():
        return flask.request.host_url
    return base_url(settings)


@callback(Output("sites-list", "children"), Input("url", "search"),
          Input("sites-changed", "data"), Input("sites-filter", "value"))
def show_list(search, _changed, needle):
    """The registered sites, as the registry holds them now."""
    query = parse_search(search)
    if view.edit_name(query) is not None:
        return no_update
    tz = view.zone_shown(ShellState.from_query(query).tz)
    try:
        found = view.listing(get_services().db, query, tz, needle)
    except Exception as exc:
        return message(describe(exc))
    note = html.P(view.listing_note(found, needle, tz), className="hint",
                  id="sites-count")
    return [note, sites_table(found.rows)] if found.rows else note


def _refused_add(reason: str):
    return message(reason, "warning"), no_update, no_update, no_update


@callback(
    Output("sites-add-status", "children"),
    Output("sites-changed", "data", allow_duplicate=True),
    Output("sites-add-name", "value"),
    Output("sites-add-origins", "value"),
    Input("sites-add", "n_clicks"),
    Input("sites-add-name", "n_submit"),
    State("sites-add-name", "value"),
    State("sites-add-tz", "value"),
    State("sites-add-origins", "value"),
    State("sites-add-agents", "value"),
    State("url", "search"),
    prevent_initial_call=True,
)
@requires("sites", refused=_refused_add)
def add(_clicks, _submits, name, tz, origins, agents, search):
    """Register a site from the form; the list shows it, and the form is ready for
    another (its zone and agents rule kept)."""
    services = get_services()
    try:
        added = view.add(services.db, name, tz, origins, agents)
    except Exception as exc:
        return message(describe(exc)), no_update, no_update, no_update
    services.sites.forget(added)            # the beacon counts it at once
    link = dcc.Link("its settings and tracking tag",
                    href=view.settings_href(added, parse_search(search)))
    return (html.Div(className="notice notice-info", role="status",
                     children=[f"Registered {added}: see ", link, "."]),
            time.time(), "", "")


@callback(
    Output("sites-save-status", "children"),
    Input("sites-save", "n_clicks"),
    State("sites-edit-name", "data"),
    State("sites-tz", "value"),
    State("sites-origins", "value"),
    State("sites-agents", "value"),
    State("sites-visit-minutes", "value"),
    State("sites-source", "value"),
    prevent_initial_call=True,
)
@requires("sites", refused=lambda reason: message(reason, "warning"))
def save(_clicks, name, tz, origins, agents, visit_minutes=None, source=None):
    """Change the site's settings to the form's."""
    services = get_services()
    try:
        saved = view.save(services.db, name, tz, origins, agents, visit_minutes, source)
    except Exception as exc:
        return message(describe(exc))
    services.sites.forget(saved.name)       # the beacon follows at once
    return message(view.saved_words(saved), "info")


@callback(
    Output("sites-edit-status", "children"),
    Output("sites-settings", "hidden"),
    Input("sites-unregister", "n_clicks"),
    Input("sites-delete", "n_clicks"),
    State("sites-edit-name", "data"),
    State("sites-confirm", "value"),
    State("url", "search"),
    prevent_initial_call=True,
)
@requires("sites", refused=lambda reason: (message(reason, "warning"), no_update))
def remove(_unregister, _delete, name, typed, search):
    """Remove the site's registration, or (its name typed) the site and all its data;
    its settings are then gone from the page."""
    services = get_services()
    try:
        said = view.remove(services.db, name, ctx.triggered_id == "sites-delete", typed)
    except Exception as exc:
        return message(describe(exc)), no_update
    services.sites.forget(name)
    back = dcc.Link("All sites", href=view.list_href(parse_search(search)))
    return html.Div(className="notice notice-info", role="status",
                    children=[said, " ", back]), True


@callback(Output("sites-goal-list", "children"), Input("sites-edit-name", "data"),
          Input("sites-goal-status", "children"))
def show_goals(name, _status):
    """The site's goals, as the registry holds them now (again after each change)."""
    if not name:
        return None
    check_site(name)
    try:
        return goal_list(view.goals_of(get_services().db, name), not_allowed() is not None)
    except Exception as exc:
        return message(describe(exc))


@callback(
    Output("sites-goal-status", "children"),
    Output("sites-goal-value", "value"),
    Input("sites-goal-add", "n_clicks"),
    Input("sites-goal-value", "n_submit"),
    Input({"type": "sites-goal-remove", "index": ALL}, "n_clicks"),
    State("sites-edit-name", "data"),
    State("sites-goal-kind", "value"),
    State("sites-goal-value", "value"),
    prevent_initial_call=True,
)
@requires("sites", refused=refused)
def change_goals(_add, _submit, _removes, name, kind, value):
    """Add the form's goal, or remove the one whose button was clicked."""
    trigger = ctx.triggered_id
    if not clicked():
        return no_update, no_update
    try:
        if isinstance(trigger, dict):
            return message(view.remove_goal(get_services().db, name, trigger["index"]),
                           "info"), no_update
        return message(view.add_goal(get_services().db, name, kind, value), "info"), ""
    except Exception as exc:
        return message(describe(exc)), no_update


# Deleting the data waits until the site's name is typed (the server checks it again).
clientside_callback(
    "function(typed, name) { return !name || (typed || '').trim() !== name; }",
    Output("sites-delete", "disabled"),
    Input("sites-confirm", "value"),
    State("sites-edit-name", "data"),
)
