"""Commands on annotations: ``annotate`` pins a note to a time; ``annotations list`` and
``annotations delete ID`` manage them."""

from __future__ import annotations

import os

import click

from queries import annotations as notes
from queries import validation

from .common import open_db, shown, store_option


@click.command()
@click.option("--site", default=None, metavar="SITE",
              help="The site the note is about; omitted: every site.")
@click.option("--at", "at", required=True, metavar="ISO",
              help="When it happened, ISO 8601; without an offset it is read in --tz.")
@click.option("--text", required=True, help=f"What happened (at most {notes.MAX_TEXT} characters).")
@click.option("--kind", type=click.Choice(notes.KINDS), default="note", show_default=True)
@click.option("--author", default=None, help="Who is writing (default: nobody).")
@click.option("--tz", default="UTC", show_default=True,
              help="IANA time zone of --at when it has no offset.")
@store_option
def annotate(site, at, text, kind, author, tz, store):
    """Pin a note to a time: it shows on every chart of the site (or of every site)."""
    when = validation.parse_time(at, tz)
    db = open_db(store)
    try:
        notes.ensure_annotation_indexes(db)
        ident = notes.add_annotation(db, site, when, text, kind, author)
    finally:
        db.client.close()
    click.echo(f"annotation {ident} at {validation.timestamp(when).isoformat()} "
               f"on {site or 'every site'}")


@click.group(invoke_without_command=True)
@click.pass_context
def annotations(ctx):
    """List (the default) or delete annotations."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_command)


@annotations.command("list")
@click.option("--site", default=None, help="Only this site's notes (and every site's).")
@click.option("-n", "limit", type=click.IntRange(1, 10_000), default=50, show_default=True)
@store_option
def list_command(site, limit, store):
    """The newest notes, one a line: id, time (UTC), site, kind, author, text."""
    db = open_db(store, read_only=True)
    try:
        rows = notes.list_annotations(db, site, limit=limit)
    finally:
        db.client.close()
    for row in rows:
        text = row["text"].replace("\n", " ")
        click.echo(shown(f"{row['id']}  {row['time'].isoformat()}  {row['site']}  "
                         f"{row['kind']}  {row['author'] or '-'}  {text}"))
    if not rows:
        click.echo("no annotations", err=True)


@annotations.command("delete")
@click.argument("ident", metavar="ID")
@store_option
def delete_command(ident, store):
    """Delete the note ``list`` shows as ID."""
    db = open_db(store)
    try:
        deleted = notes.delete_annotation(db, ident)
    finally:
        db.client.close()
    if not deleted:
        raise notes.InvalidAnnotationError(f"no annotation with id {ident!r}")
    click.echo(f"deleted {ident}")


def note_ingest(db, files, summary) -> None:
    """The automatic note of an ingest run, on each site it counted hits for."""
    names = ", ".join(os.path.basename(f) for f in files)
    notes.record_activity(db, summary.sites, f"ingested {names}: {summary.parsed:,} lines",
                          "backfill")


COMMANDS = (annotate, annotations)
