"""``hitboard notify run|log|test``: the due notifications run from a cron (the server
runs the same work on a thread), the delivery log, a test message to an address or a
webhook."""

from __future__ import annotations

import datetime as dt
import signal
import threading
import uuid

import click

from queries.notify import jobs
from queries.notify.channels import channel_of
from queries.notify.deliveries import deliver, delivery_log, ensure_notify_indexes

from ..notify.context import NotifyContext
from .common import command_settings, open_db, shown, store_option
from .stats import _emit, format_option

LOG_COLUMNS = ("at", "site", "channel", "to", "subject", "attempt", "result", "error")


def context(store: str | None) -> NotifyContext:
    settings = command_settings(store=store)
    return NotifyContext(open_db(store), settings)


@click.group()
def notify() -> None:
    """Notifications: run the due ones, read the delivery log, send a test."""


@notify.command("run")
@click.option("--every", type=click.FloatRange(min=1), default=None, metavar="SECONDS",
              help="Run again every SECONDS until SIGTERM/Ctrl-C (default: run once).")
@store_option
def run(every, store):
    """Send the due reports and alerts and the retries, as the server's thread does.
    Every send is claimed in the store first: beside a server or another cron, nothing
    goes twice."""
    ctx = context(store)
    stop = threading.Event()
    previous = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGTERM,
                                                                      signal.SIGINT)}
    try:
        ensure_notify_indexes(ctx.db)
        while True:
            jobs.run_due(ctx, dt.datetime.now(dt.UTC))
            if every is None or stop.wait(every):
                break
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        ctx.db.client.close()


@notify.command("log")
@click.option("--site", default=None, help="One site's deliveries.")
@click.option("-n", "n", type=click.IntRange(min=1, max=10_000), default=50,
              show_default=True, help="The newest N deliveries.")
@format_option
@store_option
def log(site, n, fmt, store):
    """The delivery log, newest first: when, what, to whom, attempt, result."""
    db = open_db(store, read_only=True)
    try:
        rows = delivery_log(db, site, n)
    finally:
        db.client.close()
    for row in rows:
        row["at"] = row["at"].isoformat()
    _emit(rows, LOG_COLUMNS, fmt)


@notify.command("test")
@click.option("--to", "to", required=True, metavar="ADDR|URL",
              help="An email address, or a webhook's http(s) URL.")
@click.option("--secret", default=None, help="Sign the webhook's body with this secret.")
@store_option
def test(to, secret, store):
    """Send a test message now; prints its result (a failure is retried as any)."""
    channel, target = channel_of(to)
    ctx = context(store)
    try:
        ensure_notify_indexes(ctx.db)
        text = "hitboard: a test notification. If you read this, the channel works."
        result = deliver(ctx, claim_id=f"test/{uuid.uuid4().hex}", site="", channel=channel,
                         to=target, subject="hitboard: test notification", text=text,
                         secret=secret)
        error = (delivery_log(ctx.db, None, 1) or [{}])[0].get("error", "")
    finally:
        ctx.db.client.close()
    click.echo(shown(f"{result}{': ' + error if error else ''}"))
    if result not in ("sent",):
        raise SystemExit(1)


COMMANDS = (notify,)
