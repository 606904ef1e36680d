"""``hitboard api-key create|list|revoke``: the Stats API's keys. ``create`` prints the
key alone on stdout, once (a script can capture it); what to do with it goes to
stderr."""

from __future__ import annotations

import json

import click

from queries.accounts import keys
from queries.errors import HitboardError

from .common import shown, store_option
from .stats import _database, format_option


@click.group("api-key")
def api_key() -> None:
    """Keys scripts read the Stats API with (POST /api/v2/query)."""


@api_key.command("create")
@click.option("--name", required=True, help="What the key is for, e.g. ci-report.")
@click.option("--site", "sites", multiple=True, metavar="SITE",
              help="A site it reads (repeatable); none: every site.")
@store_option
def create(name, sites, store):
    """Make a key: printed once, stored only as its SHA-256."""
    with _database(store, read_only=False) as db:
        key = keys.create(db, name, sites)
    click.echo(key)
    scope = ", ".join(sites) if sites else "every site"
    click.echo(shown(f"note: key {name!r} reads {scope}, {keys.HOURLY_LIMIT} requests an "
                     "hour; it is shown this once: keep it now (Authorization: Bearer "
                     "<key>)"), err=True)


@api_key.command("list")
@format_option
@store_option
def list_keys(fmt, store):
    """The keys: name, prefix, sites, created, last used (never the keys)."""
    with _database(store, read_only=True) as db:
        found = keys.listed(db)
    rows = [{"name": k.name, "prefix": f"{keys.SCHEME}{k.prefix}",
             "sites": " ".join(k.sites) if k.sites else "*",
             "created": k.created.isoformat(timespec="seconds"),
             "last_used": k.last_used.isoformat(timespec="seconds") if k.last_used else ""}
            for k in found]
    if fmt == "json":
        click.echo(json.dumps(rows))
        return
    for row in rows:
        click.echo("\t".join(shown(value) for value in row.values()))


@api_key.command("revoke")
@click.argument("name")
@store_option
def revoke(name, store):
    """Revoke the key NAME: it reads nothing from now on."""
    with _database(store, read_only=False) as db:
        if not keys.revoke(db, name):
            raise HitboardError(f"no key named {name!r}: `hitboard api-key list` "
                                     "names them")
    click.echo(shown(f"revoked {name}"))


COMMANDS = (api_key,)
