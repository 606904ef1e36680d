"""``hitboard alerts add|list|remove``: who is told when a site's traffic leaves its
expected range (above, below) or stops."""

from __future__ import annotations

import datetime as dt

import click

from queries.notify.alerts.rules import (
    DEFAULT_MINUTES,
    FORMATS,
    KINDS,
    MAX_MINUTES,
    AlertError,
    active_from,
    add_alert,
    all_alerts,
    remove_alert,
)

from .common import shown, store_option
from .stats import _database, _emit, format_option

COLUMNS = ("id", "site", "page", "kind", "for", "channel", "to", "format", "during_loadgen")


@click.group()
def alerts() -> None:
    """Alerts: traffic above or below the expected range, or stopped, by email or webhook."""


@alerts.command("add")
@click.option("--site", required=True, help="A registered site.")
@click.option("--page", default=None, metavar="PATH", help="One page (default: the whole site).")
@click.option("--kind", required=True, type=click.Choice(KINDS))
@click.option("--for", "minutes", type=int, default=DEFAULT_MINUTES, show_default=True,
              metavar="MINUTES", help=f"The window, 1 to {MAX_MINUTES:,} whole minutes.")
@click.option("--email", default=None, metavar="ADDR", help="Tell this address.")
@click.option("--webhook", default=None, metavar="URL",
              help="POST JSON to this http(s) URL, signed with a secret shown once.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
              help="A webhook's body: Slack/Mattermost's {\"text\": …}, or hitboard's JSON.")
@click.option("--during-loadgen", is_flag=True,
              help="Also while the load generator runs on the site (muted by default).")
@store_option
def add(site, page, kind, minutes, email, webhook, fmt, during_loadgen, store):
    """Tell ADDR or URL when SITE's traffic runs KIND for MINUTES."""
    with _database(store, read_only=False) as db:
        alert = add_alert(db, site, kind, minutes, page=page, email=email, webhook=webhook,
                          during_loadgen=during_loadgen, fmt=fmt)
        since = active_from(db, site)
    to = alert.get("email") or alert["webhook"]
    click.echo(shown(f"added alert {alert['id']}: {alert['kind']} for {alert['for']} minutes "
                     f"on {site}{' ' + alert['page'] if alert['page'] else ''} → {to}"))
    if alert.get("secret"):
        click.echo(f"webhook secret (shown once; X-Hitboard-Signature is sha256=HMAC of the "
                   f"body): {alert['secret']}")
    now = dt.datetime.now(dt.UTC)
    if since is None:
        click.echo(shown(f"{site} has no traffic yet: its alerts start 4 weeks after its "
                         "first day (the expected range needs 4 past weeks)"))
    elif since > now:
        click.echo(shown(f"{site}'s alerts start on {since:%Y-%m-%d} (UTC): the expected "
                         "range needs 4 weeks of history"))


@alerts.command("list")
@click.option("--site", default=None, help="One site (default: every site).")
@format_option
@store_option
def list_alerts(site, fmt, store):
    """Every alert: id,site,page,kind,for,channel,to,format,during_loadgen."""
    with _database(store, read_only=True) as db:
        found = all_alerts(db, site)
    rows = [{"id": a["id"], "site": a["site"], "page": a["page"] or "*", "kind": a["kind"],
             "for": a["for"], "channel": "email" if a.get("email") else "webhook",
             "to": a.get("email") or a.get("webhook"), "format": a.get("format", ""),
             "during_loadgen": bool(a["during_loadgen"])} for a in found]
    _emit(rows, COLUMNS, fmt)


@alerts.command("remove")
@click.argument("alert_id", metavar="ID")
@store_option
def remove(alert_id, store):
    """Remove the alert ID (as `alerts list` shows it)."""
    with _database(store, read_only=False) as db:
        site = remove_alert(db, alert_id)
    if site is None:
        raise AlertError(f"no alert {alert_id!r} (see `hitboard alerts list`)")
    click.echo(shown(f"removed alert {alert_id} of {site}"))


COMMANDS = (alerts,)
