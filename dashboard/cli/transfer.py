"""``hitboard export`` and ``hitboard import``: a site's days in Plausible's CSV layout,
a ZIP of one CSV a table (``queries.exports``, ``queries.imports``)."""

from __future__ import annotations

import datetime as dt
import os
import tempfile

import click

from queries.errors import InvalidRangeError, InvalidSiteError
from queries.exports import archive as export_archive
from queries.imports import archive as import_archive
from queries.imports import store as imported
from queries.stats import sites

from .common import open_db, shown, store_option


def _date(text: str, option: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise InvalidRangeError(f"{option} {text!r} is not a date (YYYY-MM-DD)") from None


@click.command()
@click.option("--site", required=True, help="Site name, e.g. site-1.")
@click.option("--start", required=True, metavar="YYYY-MM-DD", help="First day (inclusive).")
@click.option("--end", required=True, metavar="YYYY-MM-DD",
              help="Day after the last (exclusive), as `report`.")
@click.option("--out", required=True, metavar="FILE.zip", type=click.Path(dir_okay=False),
              help="The ZIP to write (replaced whole once written).")
@store_option
def export(site, start, end, out, store):
    """Write a site's days (of its time zone, else UTC) in Plausible's CSV layout: one
    file a table (visitors, pages, sources, entry and exit pages, locations, devices,
    browsers, operating systems, custom events) in a ZIP."""
    first, end_day = _date(start, "--start"), _date(end, "--end")
    if end_day <= first:
        raise InvalidRangeError("--end must come after --start (it is exclusive)")
    if (end_day - first).days > 3_660:
        raise InvalidRangeError("at most 10 years of days an export")
    db = open_db(store, read_only=True)
    try:
        if not sites.site_settings(db, site).registered:
            raise InvalidSiteError(f"unknown site {site!r}: `hitboard site list` names them")
        folder = os.path.dirname(os.path.abspath(out))
        with tempfile.NamedTemporaryFile(dir=folder, suffix=".part", delete=False) as part:
            try:
                written = export_archive.write(db, site, first, end_day, part)
            except BaseException:
                os.unlink(part.name)
                raise
        os.replace(part.name, out)
    finally:
        db.client.close()
    click.echo(shown(f"wrote {out}: " + ", ".join(
        f"{name} ({rows:,} rows)" for name, rows in written.items())), err=True)


@click.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--site", required=True, help="The site the days belong to (registered "
              "if it is not).")
@store_option
def import_(file, site, store):
    """Import a ZIP of Plausible's CSV layout (ours or Plausible's export) as imported
    days of a site: the same file again changes nothing; another file replaces the days
    it covers. The whole archive is checked first: a bad one imports nothing."""
    found = import_archive.read(file)
    db = open_db(store)
    try:
        registered = sites.register(db, site, via="import")
        imported.ensure_indexes(db)
        saved = imported.save(db, site, found)
    finally:
        db.client.close()
    days = f"{imported.day_of(found.first):%Y-%m-%d} to {imported.day_of(found.last):%Y-%m-%d}"
    if registered:
        click.echo(shown(f"registered site {site}"), err=True)
    if not saved:
        click.echo(shown(f"{file} was imported into {site} already: nothing changed"))
        return
    click.echo(shown(f"imported {len(found.days):,} days with rows ({days}) into {site}: "
                     f"{', '.join(sorted(found.tables))}"))


COMMANDS = (export, import_)
