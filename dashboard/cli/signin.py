"""``hitboard signin-link``: a fresh one-time sign-in link for the server on this store
(``hitboard serve`` prints one at start; it lasts minutes and signs in once)."""

from __future__ import annotations

import click

import queries
from queries import signin_links

from ..authority.sessions import signin_link
from ..settings import Settings
from .common import command_settings, store_option


def fresh_link(settings: Settings) -> str:
    """A new code written to the store, as the link to open."""
    db = queries.connect(settings.store, settings.database)
    try:
        return signin_link(settings, signin_links.issue(db))
    finally:
        db.client.close()


@click.command("signin-link")
@store_option
@click.option("--host", default=None, help="The server's interface [HITBOARD_HOST; 127.0.0.1].")
@click.option("--port", default=None, type=int, help="The server's port [HITBOARD_PORT; 8050].")
def signin_link_command(**options) -> None:
    """Print a link that signs a browser in to the server on this store: once, within
    minutes (the server's address from HITBOARD_PUBLIC_URL, else HOST:PORT)."""
    settings = command_settings(**options)
    click.echo(fresh_link(settings))
    click.echo(f"(signs in once, within {signin_links.LINK_SECONDS // 60} minutes)", err=True)


COMMANDS = (signin_link_command,)
