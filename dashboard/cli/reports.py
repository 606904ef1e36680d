"""``hitboard reports add|list|remove|send``: a site's email reports (weekly on Monday,
monthly on the 1st, at an hour of the site's zone), and one sent or written now."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click

from queries import validation
from queries.notify import reports as report_sends
from queries.notify.channels import check_address
from queries.notify.deliveries import compose_email, ensure_notify_indexes
from queries.notify.periods import DEFAULT_HOUR, PERIODS, period_before
from queries.notify.subscriptions import add_report, all_reports, remove_report
from queries.stats.sites import site_settings

from ..notify.context import NotifyContext
from .common import command_settings, open_db, shown, store_option
from .stats import _emit, format_option

site_option = click.option("--site", required=True, help="Site name, e.g. site-1.")
period_option = click.option("--period", required=True, type=click.Choice(PERIODS))
to_option = click.option("--to", "to", required=True, metavar="ADDR",
                         help="One email address.")


@click.group()
def reports() -> None:
    """Email reports of a site: who gets which, and one sent now."""


@reports.command("add")
@site_option
@period_option
@to_option
@click.option("--hour", type=click.IntRange(0, 23), default=DEFAULT_HOUR, show_default=True,
              help="Hour of the site's zone the report goes out (Monday or the 1st).")
@store_option
def add(site, period, to, hour, store):
    """Send ADDR SITE's report every week (Monday) or month (the 1st) at HOUR local."""
    settings = command_settings(store=store)
    db = open_db(store)
    try:
        found, new = add_report(db, site, period, to, hour, now=dt.datetime.now(dt.UTC))
    finally:
        db.client.close()
    click.echo(shown(f"{'added' if new else 'changed'}: {period}ly report of {site} to "
                     f"{found['to']} at {hour:02d}:00"))
    if not settings.public_url:
        click.echo("warning: HITBOARD_PUBLIC_URL is not set: the report's links start at "
                   f"the listen address, {report_sends.public_base(settings)}", err=True)


@reports.command("list")
@click.option("--site", default=None, help="One site's subscriptions.")
@format_option
@store_option
def list_reports(site, fmt, store):
    """Subscriptions: site,period,to,hour."""
    db = open_db(store, read_only=True)
    try:
        rows = [{k: sub[k] for k in ("site", "period", "to", "hour")}
                for sub in all_reports(db, site)]
    finally:
        db.client.close()
    _emit(rows, ("site", "period", "to", "hour"), fmt)


@reports.command("remove")
@site_option
@period_option
@to_option
@store_option
def remove(site, period, to, store):
    """Stop SITE's report of PERIOD to ADDR."""
    db = open_db(store)
    try:
        if not remove_report(db, site, period, to):
            raise validation.InvalidRangeError(f"{to} gets no {period}ly report of {site}")
    finally:
        db.client.close()
    click.echo(shown(f"removed: {period}ly report of {site} to {to}"))


@reports.command("send")
@site_option
@period_option
@to_option
@click.option("--end", default=None, metavar="DATE",
              help="Report the last complete period before DATE (default: now).")
@click.option("--out", type=click.Path(dir_okay=False, writable=True), default=None,
              metavar="FILE.eml", help="Write the email to FILE instead of sending it.")
@store_option
def send(site, period, to, end, out, store):
    """Send SITE's report of the last complete PERIOD now (or write it to FILE)."""
    settings = command_settings(store=store)
    ctx = NotifyContext(open_db(store, read_only=out is not None), settings)
    try:
        tz = site_settings(ctx.db, site).tz or "UTC"
        if not site_settings(ctx.db, site).registered:
            raise validation.InvalidRangeError(f"site {site!r} is not registered")
        until = validation.parse_time(end, tz) if end else dt.datetime.now(dt.UTC)
        if out is not None:
            to = check_address(to)
            start, stop = period_before(period, until, tz)
            fields = report_sends.message(ctx, site, period, start, stop, tz, None)
            mail = compose_email(settings, to=to, **fields)
            Path(out).write_bytes(bytes(mail))
            click.echo(shown(f"wrote {out}: {fields['subject']}"))
            return
        ensure_notify_indexes(ctx.db)
        result = report_sends.send_report(ctx, site, period, to, until)
    finally:
        ctx.db.client.close()
    click.echo(shown(f"{result}: {period}ly report of {site} to {to}"))
    if result != "sent":
        raise SystemExit(1)


COMMANDS = (reports,)
