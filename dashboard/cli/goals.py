"""``hitboard goals add|list|remove`` (a site's goals: an event's name or a page
pattern) and the custom-event breakdowns ``breakdown --by event|goal|prop``."""

from __future__ import annotations

import click

from queries.custom import reads
from queries.errors import InvalidRangeError
from queries.imports import reads as imported
from queries.stats.goals import goal
from queries.stats.sites import add_goal, remove_goal, site_settings

from .common import records, shown, store_option
from .stats import _database, _emit, format_option

BY = ("event", "goal", "prop")
COLUMNS = tuple(reads.COLUMNS)


def event_rows(db, site: str, by: str, start, end, prop: str | None, n: int,
               page: str | None = None, tz: str = "UTC", imports: bool = True
               ) -> tuple[list[dict], int]:
    """``value,conversions,visitors,conversion_rate,revenue,visitors_error`` per event
    name (those sent on ``page``, if given), goal or value of ``prop``; and how many
    imported days the whole site's events add (``imports``)."""
    if (by == "prop") != (prop is not None):
        raise InvalidRangeError("--prop NAME goes with --by prop, and only with it")
    if page is not None and by != "event":
        raise InvalidRangeError(f"--by {by} counts the whole site: no --page")
    days = 0
    if by == "event":
        frame = reads.events(db, site, start, end, page=page)
        if imports and page is None:
            counts, days = imported.breakdown_counts(db, site, by, start, end, tz)
            if days:
                people = sum(t.get("visitors", 0)
                             for _, t in imported.imported(db, site, start, end, tz))
                frame = imported.add_events(frame, counts, reads.people(db, site, start, end),
                                            people)
        frame = frame.head(n)
    elif by == "prop":
        frame = reads.props(db, site, start, end, prop).head(n)
    else:
        frame = reads.goals(db, site, start, end, site_settings(db, site).goals)
    return records(frame), days


def _goal(event: str | None, page: str | None):
    if (event is None) == (page is None):
        raise InvalidRangeError("give the goal as --event NAME or --page PATTERN")
    return goal("event", event) if event is not None else goal("page", page)


goal_options = (click.option("--event", default=None, metavar="NAME",
                             help="A custom event's name, e.g. Signup."),
                click.option("--page", default=None, metavar="PATTERN",
                             help="Pages: * is one path segment, ** anything, e.g. /blog/*."))


def _with_goal_options(command):
    for option in reversed(goal_options):
        command = option(command)
    return command


@click.group()
def goals() -> None:
    """A site's goals: what counts as a conversion (past data included)."""


@goals.command("add")
@click.argument("site")
@_with_goal_options
@store_option
def add(site, event, page, store):
    """Add a goal to SITE."""
    wanted = _goal(event, page)
    with _database(store, read_only=False) as db:
        added = add_goal(db, site, wanted)
    click.echo(shown(f"{'added' if added else 'already a goal:'} {wanted.kind} {wanted.value}"))


@goals.command("remove")
@click.argument("site")
@_with_goal_options
@store_option
def remove(site, event, page, store):
    """Remove a goal from SITE."""
    wanted = _goal(event, page)
    with _database(store, read_only=False) as db:
        if not remove_goal(db, site, wanted):
            raise InvalidRangeError(f"{site} has no {wanted.kind} goal {wanted.value!r}")
    click.echo(shown(f"removed {wanted.kind} {wanted.value}"))


@goals.command("list")
@click.argument("site")
@format_option
@store_option
def list_goals(site, fmt, store):
    """SITE's goals: kind,value."""
    with _database(store, read_only=True) as db:
        found = site_settings(db, site).goals
    _emit([{"kind": g.kind, "value": g.value} for g in found], ("kind", "value"), fmt)


COMMANDS = (goals,)
