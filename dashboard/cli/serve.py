"""``hitboard serve``: the dashboard on this machine, under gunicorn with hitboard's own
worker (``dashboard.frontdoor.worker``: gevent reads whole requests within their deadlines
and size limits, threads run the app), since it faces the open internet.

Every option is a setting of ``dashboard.settings`` with the same name, resolved
option > ``HITBOARD_*`` variable > default; a feature adds its option here and its row
there. Each worker opens the store itself, after gunicorn forks it: several workers share
the embedded store as they share a MongoDB server.
"""

from __future__ import annotations

import os
import sys

import click
from pymongo.errors import PyMongoError

import queries
from queries import accounts
from queries.errors import HitboardError
from queries.store.connection import redact

from ..authority.sessions import base_url, secret_at_start
from ..settings import Settings, resolve
from .common import store_option, store_trouble
from .signin import fresh_link

WORKER_CLASS = "dashboard.frontdoor.worker.FrontDoorWorker"
BOOT_ERROR = 3  # gunicorn's "worker failed to boot": the arbiter stops instead of retrying


def gunicorn_options(settings: Settings) -> dict:
    return {
        "bind": f"{settings.host}:{settings.port}",
        "workers": settings.workers,
        "threads": settings.threads,
        "worker_class": WORKER_CLASS,
        "worker_connections": settings.connections,
        # Non-zero, so that the worker keeps connections open between viewers' polls
        # (every 2 s); how long an idle one stays open is header_timeout.
        "keepalive": 5,
        "proc_name": "hitboard",
        # gunicorn ≥ 24's control socket has one default path per user: several hitboard
        # servers on one machine would take it from each other, and nothing here uses it.
        "control_socket_disable": True,
    }


def run_gunicorn(settings: Settings) -> None:
    from gunicorn.app.base import BaseApplication

    class HitboardServer(BaseApplication):
        hitboard_settings = settings        # the worker's limits and threads

        def load_config(self):
            for key, value in gunicorn_options(settings).items():
                if key in self.cfg.settings:  # older gunicorn lacks the newest settings
                    self.cfg.set(key, value)

        def load(self):
            from .. import create_server

            try:
                return create_server(settings)
            except HitboardError as exc:
                click.echo(f"Error: {exc}", err=True)
                sys.exit(BOOT_ERROR)

    HitboardServer().run()


def _link_at_start(settings: Settings) -> str:
    """The sign-in link, or why there is none yet: a store that does not answer now
    (a MongoDB server starting) must not stop the server from starting."""
    try:
        return fresh_link(settings)
    except PyMongoError as exc:
        return (f"(none now: {store_trouble(exc)}; run `hitboard signin-link` once the "
                "store answers)")


def _users_at_start(settings: Settings) -> list[str]:
    """Whether pages need signing in: with no user, how to add one."""
    try:
        db = queries.connect(settings.store, settings.database, read_only=True)
        try:
            exist = accounts.any_users(db)
        finally:
            db.client.close()
    except (PyMongoError, HitboardError):
        return []
    if exist:
        return [f"Every page asks for a name and password: {base_url(settings)}/signin"]
    return ["No user yet: anyone who reaches this server reads every page. "
            "`hitboard user add NAME --role admin` makes every page ask for a name "
            "and password."]


@click.command()
@click.option("--host", default=None, help="Interface to listen on [HITBOARD_HOST; 127.0.0.1].")
@click.option("--port", default=None, type=int, help="Port to listen on [HITBOARD_PORT; 8050].")
@store_option
@click.option("--workers", default=None, type=int,
              help="Server processes [HITBOARD_WORKERS; 1].")
@click.option("--threads", default=None, type=int,
              help="Request threads per process [HITBOARD_THREADS; 8].")
@click.option("--readonly/--no-readonly", default=None,
              help="Never write: no hit recorder [HITBOARD_READONLY; off].")
@click.option("--demo/--no-demo", default=None,
              help="Synthetic traffic for a first look: 30 days of history on an empty "
              "store, then live hits [HITBOARD_DEMO; off].")
def serve(**options) -> None:
    """Run the dashboard (live and historical pages) at http://HOST:PORT/."""
    settings, signin = secret_at_start(resolve(options), _link_at_start)
    store = redact(settings.store)
    click.echo(f"hitboard: http://{settings.host}:{settings.port}/ · store {store} · "
               f"{settings.workers} worker(s) × {settings.threads} threads", err=True)
    for line in signin + _users_at_start(settings):
        click.echo(line, err=True)
    master = os.getpid()
    try:
        run_gunicorn(settings)
    except SystemExit as exc:
        # Workers are forked from inside run_gunicorn: theirs must keep its own status,
        # which tells the master to halt rather than start another worker.
        if exc.code == BOOT_ERROR and os.getpid() == master:
            raise SystemExit(2) from None
        raise


COMMANDS = (serve,)
