"""``hitboard site add|set|list|remove``: the site registry, whose sites the ``/hit``
beacon counts (from their origins, when a record names some)."""

from __future__ import annotations

import json

import click

from queries import sitedata
from queries.errors import InvalidSiteError
from queries.stats.sites import (
    HIT_SOURCES,
    UNKNOWN_AGENTS,
    register,
    registered_sites,
    site_settings,
    unregister,
    update_site,
)

from .common import open_db, shown, store_option

tz_option = click.option("--tz", default=None, metavar="ZONE",
                         help="The site's own time zone (IANA, e.g. Europe/Paris).")
origin_option = click.option(
    "--origin", "origins", multiple=True, metavar="URL",
    help="An origin whose pages may send the site's beacon hits, e.g. "
         "https://blog.example.com (repeatable; none: any origin).")
agents_option = click.option("--unknown-agents-as", "unknown_agents",
                             type=click.Choice(UNKNOWN_AGENTS), default=None,
                             help="Count hits without a user agent as people or bots.")


@click.group()
def site() -> None:
    """The sites this store counts: register, change, list, remove."""


@site.command("add")
@click.argument("name")
@tz_option
@origin_option
@agents_option
@store_option
def add(name, tz, origins, unknown_agents, store):
    """Register NAME, so the /hit beacon counts its hits."""
    settings = {k: v for k, v in (("tz", tz), ("origins", origins),
                                  ("unknown_agents", unknown_agents)) if v}
    db = open_db(store)
    try:
        if not register(db, name, "admin", **settings):
            raise InvalidSiteError(f"site {name!r} is already registered: change it with "
                                   "hitboard site set")
    finally:
        db.client.close()
    click.echo(f"registered {name}")


@site.command("set")
@click.argument("name")
@tz_option
@origin_option
@click.option("--any-origin", is_flag=True, help="Accept beacon hits from any origin.")
@agents_option
@click.option("--visit-minutes", type=int, default=None, metavar="N",
              help="A visit ends after N minutes without a pageview (default 30); "
                   "visits counted before keep theirs.")
@click.option("--primary-source", type=click.Choice(HIT_SOURCES), default=None,
              help="The source its counters count (the first that fed it by default); "
                   "the other's hits are kept apart, for the Sources page.")
@store_option
def set_(name, tz, origins, any_origin, unknown_agents, visit_minutes, primary_source, store):
    """Change NAME's settings; those not given stay as they are."""
    if origins and any_origin:
        raise InvalidSiteError("give --origin or --any-origin, not both")
    db = open_db(store)
    try:
        changed = update_site(db, name, tz=tz, unknown_agents=unknown_agents,
                              visit_minutes=visit_minutes, primary_source=primary_source,
                              origins=[] if any_origin else (list(origins) or None))
    finally:
        db.client.close()
    click.echo(shown(_describe(changed)))


@site.command("list")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@store_option
def list_(fmt, store):
    """Every registered site and its settings."""
    db = open_db(store, read_only=True)
    try:
        found = registered_sites(db)
    finally:
        db.client.close()
    if fmt == "json":
        click.echo(json.dumps([{"site": s.name, "via": s.via, "tz": s.tz,
                                "origins": list(s.origins), "synthetic": s.synthetic,
                                "unknown_agents": s.unknown_agents,
                                "primary_source": s.primary_source,
                                "registered": s.since.isoformat() if s.since else None}
                               for s in found]))
        return
    for settings in found:
        click.echo(shown(_describe(settings)))


@site.command("remove")
@click.argument("name")
@click.option("--data", is_flag=True, help="Delete all of its data too: statistics, "
              "dimensions, visitors, raw events, rollups, notes.")
@click.option("--yes", is_flag=True, help="Do it without asking (with --data).")
@store_option
def remove(name, data, yes, store):
    """Unregister NAME (the beacon then refuses its hits); with --data, delete its data,
    e.g. to ingest its logs again (hitboard ingest --from-start)."""
    if data and not yes:
        click.confirm(f"Delete every hit of {name!r}, for good?", abort=True)
    db = open_db(store)
    try:
        site_settings(db, name)                         # a bad name: one line, exit 2
        if data:
            removed = sitedata.remove(db, name)
            click.echo(f"removed {name}: " + ", ".join(
                f"{n:,} from {coll}" for coll, n in sorted(removed.items())) if removed
                else f"{name} held nothing")
        else:
            if not unregister(db, name):
                raise InvalidSiteError(f"site {name!r} is not registered")
            click.echo(f"unregistered {name} (its data stays: --data removes it)")
    finally:
        db.client.close()


def _describe(settings) -> str:
    origins = ", ".join(settings.origins) or "any origin"
    extra = " · synthetic" if settings.synthetic else ""
    return (f"{settings.name}  via {settings.via or '-'} · tz {settings.tz or '-'} · "
            f"{origins} · no agent: {settings.unknown_agents} · visits end after "
            f"{settings.visit_minutes} min · counts its "
            f"{settings.primary_source or 'first source'}{extra}")


COMMANDS = (site,)
