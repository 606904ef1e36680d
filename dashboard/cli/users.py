"""``hitboard user add|set|passwd|list|remove``: the people who sign in to the
dashboard. An admin may do everything; a viewer reads its sites (none named: all) and
changes nothing. ``set``, ``passwd`` and ``remove`` sign the user out everywhere."""

from __future__ import annotations

import json
import sys

import click

from queries import accounts

from .common import open_db, shown, store_option

site_option = click.option("--site", "sites", multiple=True, metavar="SITE",
                           help="A site a viewer reads (repeatable; none: every site).")


def read_password(from_stdin: bool) -> str:
    """The password from standard input (its first line), else typed twice at a prompt."""
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    return click.prompt("Password", hide_input=True, confirmation_prompt=True)


@click.group()
def user() -> None:
    """The users who sign in to the dashboard: add, change, list, remove."""


@user.command("add")
@click.argument("name")
@click.option("--role", type=click.Choice(accounts.ROLES), required=True,
              help="admin: every action; viewer: reads its sites, changes nothing.")
@site_option
@click.option("--password-stdin", is_flag=True,
              help="Read the password from standard input (else a prompt).")
@store_option
def add(name, role, sites, password_stdin, store):
    """Add the user NAME (10 to 1,024 characters of password)."""
    accounts.users.check_name(name)
    password = accounts.check_password(read_password(password_stdin))
    db = open_db(store)
    try:
        first = not accounts.any_users(db)
        added = accounts.add_user(db, name, role, password, sites or None)
    finally:
        db.client.close()
    click.echo(f"added {added.name} ({_grants(added)})")
    if first:
        click.echo("Every page of the server on this store now needs signing in "
                   "(at /signin).", err=True)


@user.command("set")
@click.argument("name")
@click.option("--role", type=click.Choice(accounts.ROLES), default=None)
@site_option
@click.option("--all-sites", is_flag=True, help="The user reads every site.")
@store_option
def set_(name, role, sites, all_sites, store):
    """Change NAME's role or sites (the sites given replace its own); it is signed out."""
    db = open_db(store)
    try:
        changed = accounts.set_user(db, name, role, sites or None, all_sites)
    finally:
        db.client.close()
    click.echo(f"changed {changed.name} ({_grants(changed)}); signed out everywhere")


@user.command("passwd")
@click.argument("name")
@click.option("--password-stdin", is_flag=True,
              help="Read the password from standard input (else a prompt).")
@store_option
def passwd(name, password_stdin, store):
    """Give NAME a new password; it is signed out everywhere."""
    db = open_db(store)
    try:
        if accounts.find_user(db, name) is None:
            raise accounts.UserError(f"no user named {shown(name)}")
        accounts.set_password(db, name, read_password(password_stdin))
    finally:
        db.client.close()
    click.echo(f"new password for {name}; signed out everywhere")


@user.command("list")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@store_option
def list_(fmt, store):
    """The users, by name."""
    db = open_db(store, read_only=True)
    try:
        found = accounts.list_users(db)
    finally:
        db.client.close()
    if fmt == "json":
        click.echo(json.dumps([{"name": u.name, "role": u.role,
                                "sites": None if u.sites is None else sorted(u.sites),
                                "created": u.created.isoformat() if u.created else None}
                               for u in found]))
        return
    for found_user in found:
        click.echo(f"{found_user.name}\t{_grants(found_user)}")


@user.command("remove")
@click.argument("name")
@store_option
def remove(name, store):
    """Remove NAME: its sessions end at once."""
    db = open_db(store)
    try:
        accounts.remove_user(db, name)
        left = accounts.any_users(db)
    finally:
        db.client.close()
    click.echo(f"removed {name}")
    if not left:
        click.echo("No user is left: the server's pages are open to read again.", err=True)


def _grants(found: accounts.User) -> str:
    if found.role == "admin":
        return "admin"
    sites = "every site" if found.sites is None else ", ".join(sorted(found.sites))
    return f"viewer of {sites}"


COMMANDS = (user,)
