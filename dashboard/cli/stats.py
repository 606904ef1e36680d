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
from queries.dimensions.encoding import dimension
from queries.dimensions.reads import visitors_series
from queries.dimensions.spans import approximate_note
from queries.errors import InvalidRangeError
from queries.imports import reads as imported
from queries.reads.history import chart
from queries.rollups import reads as rollup_reads
from queries.stats import schema
from queries.stats.series import GRANULARITIES
from queries.validation import WHOLE_SITE
from queries.visits.reads import METRICS as VISIT_METRICS

from ..spreadsheet import cell
from . import visits
from .common import open_db, shown, store_option, whole

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


def read_report(db, source: str, site: str, pages, granularity: str, start, end, tz,
                humans: bool = False, filter: tuple[str, str] | None = None):
    """The series of ``report``, from the source that serves ``granularity``: the
    statistics through History's own read (people alone, a filter), or the rollups."""
    granularities, reader = SOURCES[source]
    if granularity not in granularities:
        offered = ", ".join(f"{name}: {', '.join(g)}" for name, (g, _) in SOURCES.items())
        raise InvalidRangeError(
            f"granularity {granularity!r} is not offered by source {source!r} ({offered})"
        )
    if source != "stats":
        if humans or filter:
            raise InvalidRangeError("--humans and --filter count from the statistics: "
                                    "use --source stats")
        return reader(db, site, start, end, granularity, pages, tz), None
    if filter and pages:
        raise InvalidRangeError("--filter counts the whole site's hits: no --page")
    found = chart(db, site, start, end, granularity, tz, pages, filter, humans)
    columns = list(found.frame.columns) if pages else [WHOLE_SITE]
    return found.frame.set_axis(columns, axis=1), found


def _emit(rows: list[dict], columns: tuple[str, ...], fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(rows))
        return
    writer = csv.DictWriter(sys.stdout, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows({key: cell(shown(value) if isinstance(value, str) else value)
                      for key, value in row.items()} for row in rows)


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
@click.option("--metric", type=click.Choice(["hits", "visitors", *VISIT_METRICS]),
              default="hits", show_default=True,
              help="visitors: distinct visitors per hour or day (whole site, from "
              "sketches); visits, pageviews, bounce_rate (%), visit_duration (s), "
              "views_per_visit: of the visits starting in each bucket (with --page: "
              "its pageviews and the visits entering there).")
@click.option("--humans", is_flag=True, help="Count people alone (bots left out), as "
              "History does by default.")
@click.option("--no-imports", "no_imports", is_flag=True,
              help="Leave imported days out (`hitboard import`; they add to visitors and "
              "visit metrics per day or longer, whole site).")
@click.option("--filter", "filter_", metavar="DIM:VALUE", default=None,
              help="Only the hits whose dimension is that value, e.g. referrer:news.example "
              "(whole site, per hour at the finest), as History's filter.")
@start_option
@end_option
@tz_option
@format_option
@store_option
def report(site, pages, granularity, source, metric, humans, no_imports, filter_, start, end,
           tz, fmt, store):
    """Hits (or visitors) per bucket of a site or its pages, in long form: the figures
    History shows for the same range, zone and choices."""
    begin, finish = _range(start, end, tz)
    if metric in VISIT_METRICS:
        if filter_ or humans or source != "stats":
            raise InvalidRangeError("visit metrics count people's pageviews: no --filter, "
                                    "--humans or --source")
        with _database(store, read_only=True) as db:
            rows, exact, added = visits.report_rows(db, site, pages, granularity, metric,
                                                    begin, finish, tz, not no_imports)
        _emit(rows, ("time", "page", metric), fmt)
        visits.note_if_approximate(exact)
        _note(added)
        return
    if metric == "visitors":
        if pages or filter_ or source != "stats" or granularity not in ("hour", "day"):
            raise InvalidRangeError("--metric visitors counts the whole site per hour or day "
                                    "from the statistics: no --page, --filter, --source stats")
        with _database(store, read_only=True) as db:
            frame = visitors_series(db, site, begin, finish, granularity, tz, humans=humans)
            added = imported.Added(0, True)
            if not no_imports:
                added = imported.add_visitors(db, site, frame, begin, finish, granularity, tz)
        rows = [{"time": time.isoformat(), "visitors": whole(n)}
                for time, n in frame["visitors"].items()]
        _emit(rows, ("time", "visitors"), fmt)
        if not frame.attrs["exact"]:
            click.echo("note: some buckets count the whole UTC hours nearest them (the raw "
                       "events of the hours they cut are no longer kept)", err=True)
        _note(imported.note(added))
        return
    with _database(store, read_only=True) as db:
        frame, found = read_report(db, source, site, pages, granularity, begin, finish, tz,
                                   humans, _filter(filter_))
    rows = [{"time": time.isoformat(), "page": page, "hits": whole(hits)}
            for time, row in frame.iterrows() for page, hits in row.items()]
    _emit(rows, ("time", "page", "hits"), fmt)
    if found is not None:
        _notes(found, tz)


def _note(text: str | None) -> None:
    if text:
        click.echo(f"note: {text}", err=True)


def _filter(text: str | None) -> tuple[str, str] | None:
    """``DIM:VALUE`` (the value may hold colons), checked."""
    if text is None:
        return None
    by, _, value = text.partition(":")
    dimension(by)
    if not value:
        raise InvalidRangeError("a filter is DIM:VALUE, e.g. referrer:news.example")
    return by, value


def _notes(found, tz: str) -> None:
    """What a report's figures count, when it is not plainly what was asked."""
    if found.unsplit:
        click.echo(f"note: {found.unsplit:,} hits were stored before bots were counted "
                   "apart: they count as people", err=True)
    if not found.exact:
        click.echo(f"note: {approximate_note(found.counted, tz, 'Hits')}", err=True)


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
    rows = [{"page": page, "hits": whole(hits)} for page, hits in frame["hits"].items()]
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
