"""Commands on the pre-aggregated statistics: report, top, preallocate, indexes."""

from __future__ import annotations

import csv
import datetime as dt
import json
import sys
from contextlib import contextmanager

import click

import queries
from queries import validation
from queries.dimensions.reads import visitors_series
from queries.errors import InvalidRangeError
from queries.rollups import reads as rollup_reads
from queries.stats import schema
from queries.stats.series import GRANULARITIES

from .common import open_db, store_option

# Where `report` reads each granularity from: source name -> (granularities, reader).
# A reader takes (db, site, start, end, granularity, pages, tz) and returns the frame
# `queries.series` returns. Another source (e.g. rollups) is one more entry here.
SOURCES = {"stats": (GRANULARITIES, queries.series),
           "rollup": (rollup_reads.GRANULARITIES, rollup_reads.rollup_series)}


@contextmanager
def _database(store: str | None, read_only: bool):
    db = open_db(store, read_only=read_only)
    try:
        yield db
    finally:
        db.client.close()


def read_report(db, source: str, site: str, pages, granularity: str, start, end, tz):
    """The series of ``report``, from the source that serves ``granularity``."""
    granularities, reader = SOURCES[source]
    if granularity not in granularities:
        offered = ", ".join(f"{name}: {', '.join(g)}" for name, (g, _) in SOURCES.items())
        raise InvalidRangeError(
            f"granularity {granularity!r} is not offered by source {source!r} ({offered})"
        )
    return reader(db, site, start, end, granularity, pages, tz)


def _emit(rows: list[dict], columns: tuple[str, ...], fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(rows))
        return
    writer = csv.DictWriter(sys.stdout, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)


def _range(start: str, end: str, tz: str) -> tuple[dt.datetime, dt.datetime]:
    return validation.parse_time(start, tz), validation.parse_time(end, tz)


site_option = click.option("--site", required=True, help="Site name, e.g. site-1.")
start_option = click.option("--start", required=True, metavar="ISO",
                            help="Range start (inclusive); without an offset it is read in --tz.")
end_option = click.option("--end", required=True, metavar="ISO",
                          help="Range end (exclusive); without an offset it is read in --tz.")
tz_option = click.option("--tz", default="UTC", show_default=True,
                         help="IANA time zone of the buckets, e.g. Europe/Paris.")
format_option = click.option("--format", "fmt", type=click.Choice(["csv", "json"]),
                             default="csv", show_default=True)


@click.command()
@site_option
@click.option("--page", "pages", multiple=True, metavar="PATH",
              help="A page (repeatable); omitted: the whole site, shown as page '*'.")
@click.option("--granularity", required=True,
              type=click.Choice(sorted({g for gs, _ in SOURCES.values() for g in gs})))
@click.option("--source", type=click.Choice(sorted(SOURCES)), default="stats",
              show_default=True, help="Where the counts come from.")
@click.option("--metric", type=click.Choice(["hits", "visitors"]), default="hits",
              show_default=True, help="visitors: distinct visitors per hour or day "
              "(whole site, from sketches).")
@start_option
@end_option
@tz_option
@format_option
@store_option
def report(site, pages, granularity, source, metric, start, end, tz, fmt, store):
    """Hits (or visitors) per bucket of a site or its pages, in long form."""
    begin, finish = _range(start, end, tz)
    if metric == "visitors":
        if pages or source != "stats" or granularity not in ("hour", "day"):
            raise InvalidRangeError("--metric visitors counts the whole site per hour or day "
                                    "from the statistics: no --page, --source stats")
        with _database(store, read_only=True) as db:
            frame = visitors_series(db, site, begin, finish, granularity, tz)
        rows = [{"time": time.isoformat(), "visitors": int(n)}
                for time, n in frame["visitors"].items()]
        _emit(rows, ("time", "visitors"), fmt)
        return
    with _database(store, read_only=True) as db:
        frame = read_report(db, source, site, pages, granularity, begin, finish, tz)
    rows = [{"time": time.isoformat(), "page": page, "hits": int(hits)}
            for time, row in frame.iterrows() for page, hits in row.items()]
    _emit(rows, ("time", "page", "hits"), fmt)


@click.command()
@site_option
@start_option
@end_option
@tz_option
@click.option("-n", "n", type=click.IntRange(min=1), default=10, show_default=True,
              help="How many pages.")
@format_option
@store_option
def top(site, start, end, tz, n, fmt, store):
    """The most visited pages of a site over a range (to the minute; dates and times
    are read in --tz)."""
    begin, finish = _range(start, end, tz)
    with _database(store, read_only=True) as db:
        frame = queries.top_pages(db, site, begin, finish, n=n)
    rows = [{"page": page, "hits": int(hits)} for page, hits in frame["hits"].items()]
    _emit(rows, ("page", "hits"), fmt)


def _day(text: str | None) -> dt.date:
    if text is None:
        return dt.datetime.now(dt.UTC).date()
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise InvalidRangeError(f"invalid day {text!r}: use YYYY-MM-DD") from None


@click.command()
@site_option
@click.option("--page", "pages", multiple=True, required=True, metavar="PATH",
              help="A page (repeatable); the whole site's documents come with it.")
@click.option("--day", metavar="YYYY-MM-DD", help="UTC day  [default: today]")
@store_option
def preallocate(site, pages, day, store):
    """Create zero-filled documents for a UTC day (existing counts are never touched)."""
    target = _day(day)
    site = validation.site(site)
    pages = [validation.page(p) for p in pages]
    with _database(store, read_only=False) as db:
        for page in pages:
            queries.preallocate(db, target, site, page)
    click.echo(f"pre-allocated {target.isoformat()} for {site}: {', '.join(pages)} and '*'")


@click.command()
@store_option
def indexes(store):
    """Create the indexes charts rely on, then list every index."""
    with _database(store, read_only=False) as db:
        queries.ensure_indexes(db)
        rows = schema.describe_indexes(db)
    for coll, name, keys in rows:
        click.echo(f"{coll}\t{name}\t" + ", ".join(f"{k}:{d}" for k, d in keys))


COMMANDS = (report, top, preallocate, indexes)
