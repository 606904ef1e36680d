"""``hitboard share create|list|revoke``: links that show one site read-only, in a page
or an ``<iframe>`` (``/share/<token>``, served by ``dashboard/share``)."""

from __future__ import annotations

import json
import sys

import click

from queries import shares

from ..authority.sessions import base_url, is_https
from .common import command_settings, open_db, shown, store_option


def share_link(settings, token: str) -> str:
    """Where the link opens: ``HITBOARD_PUBLIC_URL``, else the listen address."""
    return f"{base_url(settings)}/share/{token}"


@click.group()
def share() -> None:
    """Share links: one site's History and Live, read-only, for whoever holds the link."""


@share.command("create")
@click.option("--site", required=True, help="The site the link shows (and nothing else).")
@click.option("--filter", "filter_", metavar="DIM:VALUE", default=None,
              help="Lock the views to this filter, as report --filter (page:/pricing).")
@click.option("--password-stdin", is_flag=True,
              help="Read a password (10 to 1,024 characters) from stdin's first line.")
@click.option("--frame-ancestors", "origins", multiple=True, metavar="ORIGIN",
              help="An origin whose pages may embed the link in an <iframe> "
                   "(repeatable; none: any origin).")
@click.option("--host", default=None, help="The server's interface, for the printed link.")
@click.option("--port", default=None, type=int, help="The server's port, for the link.")
@store_option
def create(site, filter_, password_stdin, origins, host, port, store):
    """Print a new link to SITE's read-only views (once: the store keeps its hash)."""
    settings = command_settings(store=store, host=host, port=port)
    password = _stdin_password() if password_stdin else None
    db = open_db(store)
    try:
        token, made = shares.create(db, site, filter_, password, tuple(origins))
    finally:
        db.client.close()
    click.echo(share_link(settings, token))
    what = f"{made.site}" + (f", filter {made.filter_text}" if made.filter else "")
    click.echo(shown(f"(shows {what}; embed with ?embed=true; `hitboard share revoke "
                     f"{made.prefix}` ends it)"), err=True)
    if made.locked and not is_https(settings):
        click.echo("note: over plain http a password link opens as a page but cannot be "
                   "embedded on another site (its unlock cookie needs https: set "
                   "HITBOARD_PUBLIC_URL=https://...)", err=True)


def _stdin_password() -> str:
    line = sys.stdin.readline()
    return line[:-1] if line.endswith("\n") else line


@share.command("list")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@store_option
def list_(fmt, store):
    """Every share link: its prefix (not the link), site, filter, framing, password."""
    db = open_db(store, read_only=True)
    try:
        found = shares.listed(db)
    finally:
        db.client.close()
    rows = [{"prefix": s.prefix, "site": s.site, "filter": s.filter_text or None,
             "frame_ancestors": list(s.frame_ancestors), "password": s.locked,
             "created": s.created.isoformat() if s.created else None} for s in found]
    if fmt == "json":
        click.echo(json.dumps(rows))
        return
    for row in rows:
        click.echo(shown(f"{row['prefix']}…  {row['site']} · filter {row['filter'] or '-'} · "
                         f"framed by {', '.join(row['frame_ancestors']) or 'any origin'}"
                         f"{' · password' if row['password'] else ''}"))


@share.command("revoke")
@click.argument("prefix")
@store_option
def revoke(prefix, store):
    """End the link whose token begins with PREFIX (as share list shows it)."""
    db = open_db(store)
    try:
        removed = shares.revoke(db, prefix)
    finally:
        db.client.close()
    if not removed:
        raise shares.ShareError(f"no share link begins with {prefix[:20]!r}: see share list")
    click.echo(f"revoked {prefix[:shares.PREFIX_CHARS]}…")


COMMANDS = (share,)
