"""The email reports of ``/sites?edit=NAME``: who gets which, added and removed as
``hitboard reports`` does, and the site's delivery log. Recipients and the log are shown
only to those holding ``notify`` (a visitor reads "sign in to see recipients"); each
change is guarded by ``@requires("notify")`` and a refusal is a message in the page."""

from __future__ import annotations

import datetime as dt

from dash import ALL, Input, Output, State, callback, ctx, dcc, html, no_update

from components import message
from dashboard.authority import refusal, requires
from dashboard.feedback import describe
from dashboard.pages.sites.clicks import clicked, refused
from dashboard.services import get_services
from queries.notify.deliveries import delivery_log
from queries.notify.periods import DEFAULT_HOUR
from queries.notify.subscriptions import add_report, remove_report, reports_of

LOG_ROWS = 20
HIDDEN = "Sign in to see recipients and the delivery log."
# Said to someone signed in whose role may not manage notifications: signing in is done.
NOT_YOURS = "Recipients and the delivery log are shown to those who manage notifications."


def reports_not_allowed() -> str | None:
    """Why this viewer may not manage notifications, or None."""
    if get_services().settings.readonly:
        return ("This server is read-only (HITBOARD_READONLY): manage reports with "
                "`hitboard reports` on its host.")
    refused = refusal("notify")
    return refused.reason if refused else None


def reports_card(disabled: bool) -> html.Section:
    """The section: the subscriptions (filled by a callback), the form adding one, the
    delivery log."""
    return html.Section(className="card", id="sites-reports", children=[
        html.H2("Email reports", className="card-title"),
        html.P("Weekly on Monday or monthly on the 1st, at the hour given in the site's "
               "zone: its figures against the period before, History's chart, top pages "
               "and referrers, goals and notes.", className="hint"),
        html.Div(id="sites-report-list"),
        html.Div(className="goal-form", children=[
            dcc.RadioItems(id="sites-report-period", value="week", inline=True,
                           className="segmented",
                           options=[{"label": label, "value": value, "disabled": disabled}
                                    for value, label in (("week", "Weekly"),
                                                         ("month", "Monthly"))]),
            html.Label("Address", htmlFor="sites-report-to", className="visually-hidden"),
            dcc.Input(id="sites-report-to", type="email", value="", maxLength=254,
                      placeholder="name@example.com", autoComplete="off",
                      className="text-input goal-input", disabled=disabled),
            html.Span(className="report-hour", children=[
                html.Label("at", htmlFor="sites-report-hour", className="hint"),
                dcc.Input(id="sites-report-hour", type="number", min=0, max=23, step=1,
                          value=DEFAULT_HOUR, className="text-input", disabled=disabled,
                          style={"width": "5em"}),
                html.Span(":00", className="hint")]),
            html.Button("Add report", id="sites-report-add", n_clicks=0, className="btn",
                        disabled=disabled),
        ]),
        html.Div(id="sites-report-status", role="status", className="status-line"),
        html.Div(id="sites-report-log"),
    ])


def _subscriptions(rows: list[dict], disabled: bool):
    if not rows:
        return html.P("No email reports.", className="muted", id="sites-report-none")
    return html.Ul(className="goal-list", children=[
        html.Li(className="goal-item", children=[
            html.Span(f"{row['period']}ly", className="site-tag"),
            html.Code(row["to"], className="goal-value"),
            html.Span(f"at {row['hour']:02d}:00", className="hint"),
            html.Button("Remove", id={"type": "sites-report-remove",
                                      "index": f"{row['period']} {row['to']}"},
                        n_clicks=0, className="btn btn-small", disabled=disabled)])
        for row in rows])


def _log(rows: list[dict]):
    """The deliveries under their heading (none of either for who may not read them)."""
    return [html.H3("Deliveries", className="card-subtitle"), _deliveries(rows)]


def _deliveries(rows: list[dict]):
    if not rows:
        return html.P("Nothing delivered yet.", className="muted")
    head = ("when (UTC)", "to", "what", "attempt", "result")
    return html.Table(className="totals stack-on-phone", children=[
        html.Thead(html.Tr([html.Th(h) for h in head])),
        html.Tbody([html.Tr([html.Td(value, **{"data-label": h}) for h, value in zip(head, (
            row["at"].astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M"), row["to"],
            row["subject"], row["attempt"],
            row["result"] + (f": {row['error']}" if row["error"] else "")), strict=True)])
            for row in rows])])


def register_report_callbacks() -> None:
    @callback(Output("sites-report-list", "children"), Output("sites-report-log", "children"),
              Input("sites-edit-name", "data"), Input("sites-report-status", "children"))
    def show_reports(name, _status):
        """The site's subscriptions and deliveries, for those who may see recipients."""
        if not name:
            return None, None
        refused = refusal("notify")
        if refused is not None:
            said = HIDDEN if refused.status == 401 else NOT_YOURS
            return html.P(said, className="hint", id="sites-report-hidden"), None
        db = get_services().db
        try:
            return (_subscriptions(reports_of(db, name), reports_not_allowed() is not None),
                    _log(delivery_log(db, name, LOG_ROWS)))
        except Exception as exc:
            return message(describe(exc)), None

    @callback(
        Output("sites-report-status", "children"),
        Output("sites-report-to", "value"),
        Input("sites-report-add", "n_clicks"),
        Input({"type": "sites-report-remove", "index": ALL}, "n_clicks"),
        State("sites-edit-name", "data"),
        State("sites-report-period", "value"),
        State("sites-report-to", "value"),
        State("sites-report-hour", "value"),
        prevent_initial_call=True,
    )
    @requires("notify", refused=refused)
    def change_reports(_add, _removes, name, period, to, hour):
        """Add the form's subscription, or remove the one whose button was clicked."""
        if not clicked() or not name:
            return no_update, no_update
        db = get_services().db
        trigger = ctx.triggered_id
        try:
            if isinstance(trigger, dict):
                period, _, to = str(trigger["index"]).partition(" ")
                remove_report(db, name, period, to)
                return message(f"Removed the {period}ly report to {to}.", "info"), no_update
            added, new = add_report(db, name, period, to or "",
                                    hour if isinstance(hour, int) else DEFAULT_HOUR)
        except Exception as exc:
            return message(describe(exc)), no_update
        said = "Added" if new else "Changed"
        return message(f"{said}: the {period}ly report to {added['to']} at "
                       f"{added['hour']:02d}:00.", "info"), ""
