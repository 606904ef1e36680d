"""The alerts of ``/sites?edit=NAME``: who is told when the site's traffic runs above or
below its expected range, or stops, added and removed as ``hitboard alerts`` does.
Recipients and webhook URLs are shown only to those holding ``notify`` (a visitor reads
"sign in to see recipients"); each change is guarded by ``@requires("notify")`` and a
refusal is a message in the page."""

from __future__ import annotations

import datetime as dt

from dash import ALL, Input, Output, State, callback, ctx, dcc, html, no_update

from components import message
from dashboard.authority import refusal, requires
from dashboard.authority.scope import check_site
from dashboard.feedback import describe
from dashboard.pages.sites.clicks import clicked, refused
from dashboard.services import get_services
from queries.notify.alerts.rules import (
    DEFAULT_MINUTES,
    KINDS,
    MAX_MINUTES,
    active_from,
    add_alert,
    alerts_of,
    remove_alert,
)

HIDDEN = "Sign in to see recipients."
KIND_WORDS = {"above": "Above the range", "below": "Below the range",
              "stopped": "Traffic stopped"}


def alerts_not_allowed() -> str | None:
    """Why this viewer may not manage notifications, or None."""
    if get_services().settings.readonly:
        return ("This server is read-only (HITBOARD_READONLY): manage alerts with "
                "`hitboard alerts` on its host.")
    refused = refusal("notify")
    return refused.reason if refused else None


def alerts_card(disabled: bool) -> html.Section:
    """The section: the alerts (filled by a callback) and the form adding one."""
    return html.Section(className="card", id="sites-alerts", children=[
        html.H2("Alerts", className="card-title"),
        html.P("Told once when the last minutes run outside the expected range (the band "
               "of the same weekday and time over past weeks) or traffic stops, and once "
               "when they are back to normal. Needs 4 weeks of history; muted while the "
               "load generator runs unless asked.", className="hint"),
        html.Div(id="sites-alert-list"),
        html.Div(className="goal-form", children=[
            dcc.RadioItems(id="sites-alert-kind", value="stopped", inline=True,
                           className="segmented",
                           options=[{"label": KIND_WORDS[k], "value": k, "disabled": disabled}
                                    for k in KINDS]),
            html.Label("for", htmlFor="sites-alert-for", className="hint"),
            dcc.Input(id="sites-alert-for", type="number", min=1, max=MAX_MINUTES, step=1,
                      value=DEFAULT_MINUTES, className="text-input", disabled=disabled,
                      style={"width": "5em"}),
            html.Span("minutes", className="hint"),
            html.Label("Page", htmlFor="sites-alert-page", className="visually-hidden"),
            dcc.Input(id="sites-alert-page", type="text", value="", maxLength=2048,
                      placeholder="page (blank: whole site)", autoComplete="off",
                      className="text-input goal-input", disabled=disabled),
        ]),
        html.Div(className="goal-form", children=[
            dcc.RadioItems(id="sites-alert-channel", value="email", inline=True,
                           className="segmented",
                           options=[{"label": "Email", "value": "email", "disabled": disabled},
                                    {"label": "Webhook", "value": "webhook",
                                     "disabled": disabled}]),
            html.Label("Address or URL", htmlFor="sites-alert-to",
                       className="visually-hidden"),
            dcc.Input(id="sites-alert-to", type="text", value="", maxLength=2000,
                      placeholder="name@example.com or https://hooks…", autoComplete="off",
                      className="text-input goal-input", disabled=disabled),
            dcc.Checklist(id="sites-alert-json", value=[],
                          options=[{"label": " webhook: hitboard's JSON (not Slack's text)",
                                    "value": "json", "disabled": disabled}]),
            dcc.Checklist(id="sites-alert-loadgen", value=[],
                          options=[{"label": " also while the load generator runs",
                                    "value": "yes", "disabled": disabled}]),
            html.Button("Add alert", id="sites-alert-add", n_clicks=0, className="btn",
                        disabled=disabled),
        ]),
        html.Div(id="sites-alert-status", role="status", className="status-line"),
    ])


def _starts(since: dt.datetime | None):
    if since is None:
        return html.P("No traffic yet: alerts start 4 weeks after the first day.",
                      className="hint", id="sites-alert-starts")
    if since > dt.datetime.now(dt.UTC):
        return html.P(f"Alerts start on {since:%Y-%m-%d} (UTC): the expected range needs "
                      "4 weeks of history.", className="hint", id="sites-alert-starts")
    return None


def _listed(rows: list[dict], disabled: bool):
    if not rows:
        return html.P("No alerts.", className="muted", id="sites-alert-none")
    return html.Ul(className="goal-list", children=[
        html.Li(className="goal-item", children=[
            html.Span(KIND_WORDS[row["kind"]], className="site-tag"),
            html.Span(f"for {row['for']} min", className="hint"),
            html.Code(row["page"] or "whole site", className="goal-value"),
            html.Span("→", className="hint"),
            html.Code(row.get("email") or row.get("webhook"), className="goal-value"),
            html.Span("JSON", className="hint") if row.get("format") == "json" else None,
            html.Span("during load tests too", className="hint")
            if row["during_loadgen"] else None,
            html.Button("Remove", id={"type": "sites-alert-remove", "index": row["id"]},
                        n_clicks=0, className="btn btn-small", disabled=disabled)])
        for row in rows])


def register_alert_callbacks() -> None:
    @callback(Output("sites-alert-list", "children"), Input("sites-edit-name", "data"),
              Input("sites-alert-status", "children"))
    def show_alerts(name, _status):
        """The site's alerts and the day they start, for those who may see recipients."""
        if not name:
            return None
        check_site(name)
        if refusal("notify") is not None:
            return html.P(HIDDEN, className="hint", id="sites-alert-hidden")
        db = get_services().db
        try:
            return [_starts(active_from(db, name)),
                    _listed(alerts_of(db, name), alerts_not_allowed() is not None)]
        except Exception as exc:
            return message(describe(exc))

    @callback(
        Output("sites-alert-status", "children"),
        Output("sites-alert-to", "value"),
        Input("sites-alert-add", "n_clicks"),
        Input({"type": "sites-alert-remove", "index": ALL}, "n_clicks"),
        State("sites-edit-name", "data"),
        State("sites-alert-kind", "value"),
        State("sites-alert-for", "value"),
        State("sites-alert-page", "value"),
        State("sites-alert-channel", "value"),
        State("sites-alert-to", "value"),
        State("sites-alert-json", "value"),
        State("sites-alert-loadgen", "value"),
        prevent_initial_call=True,
    )
    @requires("notify", refused=refused)
    def change_alerts(_add, _removes, name, kind, minutes, page, how, to, body, loadgen):
        """Add the form's alert, or remove the one whose button was clicked."""
        if not clicked() or not name:
            return no_update, no_update
        check_site(name)
        db = get_services().db
        trigger = ctx.triggered_id
        try:
            if isinstance(trigger, dict):
                remove_alert(db, str(trigger["index"]), site=name)
                return message("Removed the alert.", "info"), no_update
            channel = ({"webhook": to, "fmt": "json" if body else "text"} if how == "webhook"
                       else {"email": to})
            alert = add_alert(db, name, kind, DEFAULT_MINUTES if minutes is None else minutes,
                              page=page or None, during_loadgen=bool(loadgen), **channel)
        except Exception as exc:
            return message(describe(exc)), no_update
        said = [f"Added: {KIND_WORDS[alert['kind']].lower()} for {alert['for']} minutes → "
                f"{alert.get('email') or alert['webhook']}."]
        if alert.get("secret"):
            said += [" The webhook's secret, shown once (X-Hitboard-Signature is sha256= "
                     "the HMAC of the body): ", html.Code(alert["secret"],
                                                          id="sites-alert-secret")]
        return message(said, "info"), ""
