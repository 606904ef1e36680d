"""Commands on the dimensions: breakdown, visitors, compact-visitors
(``report --metric visitors`` lives with ``report`` in ``stats``)."""

from __future__ import annotations

import datetime as dt

import click

from queries import validation
from queries.dimensions import reads, sketches
from queries.dimensions.spans import approximate_note
from queries.errors import InvalidRangeError
from queries.imports import reads as imported

from . import goals, visits
from .common import store_option, whole
from .stats import (
    _database,
    _day,
    _emit,
    _note,
    _range,
    end_option,
    format_option,
    site_option,
    start_option,
    tz_option,
)

BY = ("referrer", "status", "browser", "os", "device", "country", "bot", "utm_source",
      "utm_medium", "utm_campaign", "kind", "page", "notfound", *visits.PAGE_DIMENSIONS,
      *goals.BY)


@click.command()
@site_option
@click.option("--by", required=True, type=click.Choice(BY), help="The dimension.")
@start_option
@end_option
@tz_option
@click.option("--page", default=None, metavar="PATH",
              help="One page (counted from raw events, within their retention).")
@click.option("-n", "n", type=click.IntRange(min=1), default=20, show_default=True,
              help="How many values.")
@click.option("--prop", default=None, metavar="NAME",
              help="With --by prop: the custom events' property.")
@click.option("--bots", is_flag=True,
              help="Count bots too (default: humans only, as the dashboard; --by bot "
                   "always counts both).")
@click.option("--no-imports", "no_imports", is_flag=True,
              help="Leave imported days out (`hitboard import`; they add to the whole "
              "site's referrer, utm_*, country, device, browser, os, page, entry_page, "
              "exit_page and event, their pageviews as hits).")
@format_option
@store_option
def breakdown(site, by, start, end, tz, page, n, prop, bots, no_imports, fmt, store):
    """Hits and visitors per value of a dimension over a range: value, hits, visitors,
    visitors_error (the half-width of the visitors' 95 % interval where a sketch counted
    them, 0 where exact) (entry_page, exit_page: value, visits, bounce_rate,
    visit_duration; event, goal, prop: value, conversions, visitors, conversion_rate,
    revenue, visitors_error)."""
    begin, finish = _range(start, end, tz)
    if by in goals.BY:
        if bots:
            raise InvalidRangeError(f"--by {by} counts people's custom events: no --bots")
        with _database(store, read_only=True) as db:
            rows, days = goals.event_rows(db, site, by, begin, finish, prop, n,
                                          validation.page(page) if page else None, tz,
                                          not no_imports)
        _emit(rows, goals.COLUMNS, fmt)
        visits.note_if_approximate(visits.reads.is_exact(begin, finish))
        _note(imported.note(imported.Added(days, True)))
        return
    if prop is not None:
        raise InvalidRangeError("--prop NAME goes with --by prop, and only with it")
    if by in visits.PAGE_DIMENSIONS:
        if page or bots:
            raise InvalidRangeError(f"--by {by} counts people's visits: no --page, --bots")
        with _database(store, read_only=True) as db:
            rows, exact, added = visits.page_rows(db, site, by, begin, finish, n, tz,
                                                  not no_imports)
        _emit(rows, ("value", "visits", "bounce_rate", "visit_duration"), fmt)
        visits.note_if_approximate(exact)
        _note(added)
        return
    humans = not bots and by != "bot"
    with _database(store, read_only=True) as db:
        frame = reads.breakdown(db, site, by, begin, finish, page=page, humans=humans)
        days = 0
        if not (no_imports or page):
            counts, days = imported.breakdown_counts(db, site, by, begin, finish, tz)
            frame = imported.add_breakdown(frame, counts)
        frame = frame.head(n)
    rows = [{"value": row.value, "hits": whole(row.hits), "visitors": whole(row.visitors),
             "visitors_error": None if whole(row.visitors) is None
             else whole(row.visitors_error) or 0} for row in frame.itertuples()]
    _emit(rows, ("value", "hits", "visitors", "visitors_error"), fmt)
    if frame.attrs.get("note"):
        click.echo(f"note: {frame.attrs['note']}", err=True)
    if days:
        _note(imported.note(imported.Added(days, True)) + "; visitors per value sum the "
              "days' visitors, approximate")
    if not frame.attrs.get("exact", True):
        click.echo(f"note: {approximate_note(frame.attrs['counted'], tz, 'Hits')}", err=True)
    elif not frame.attrs.get("visitors_exact", True):
        click.echo("note: visitors per value come from the sketches of whole UTC days "
                   "(the raw events of the range's other hours are no longer kept), each "
                   "at most its hits", err=True)


@click.command()
@site_option
@start_option
@end_option
@tz_option
@click.option("--humans", is_flag=True,
              help="People only, bots left out (as History and the email reports count)")
@store_option
def visitors(site, start, end, tz, humans, store):
    """Distinct visitors ((address, user agent) pairs) over a range, from sketches: the
    estimate, and on stderr its 95 % interval where it is not exact."""
    begin, finish = _range(start, end, tz)
    with _database(store, read_only=True) as db:
        found = reads.visitors(db, site, begin, finish, humans=humans)
    click.echo(found.n)
    if found.error:
        click.echo(f"note: an estimate from sketches: ≈{found.n:,} ± {found.error:,} "
                   "(95 %)", err=True)
    if not found.exact:
        click.echo(f"note: {approximate_note(found.counted, tz, 'Visitors')}", err=True)


@click.command("compact-visitors")
@click.option("--before", metavar="YYYY-MM-DD", default=None,
              help="Compact buckets starting before this UTC day  [default: today]")
@store_option
def compact_visitors(before, store):
    """Merge each past bucket's visitor sketches (one per process that wrote it) into one
    document. Safe while others write: unions are idempotent."""
    day = _day(before)
    cutoff = dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)
    with _database(store, read_only=False) as db:
        removed = sketches.compact_all(db, cutoff)
    click.echo(f"merged {removed:,} sketch documents of buckets before {day.isoformat()}")


COMMANDS = (breakdown, visitors, compact_visitors)
