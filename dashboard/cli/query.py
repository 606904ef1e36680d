"""``hitboard query [FILE|-]``: a Stats API question (the JSON ``POST /api/v2/query``
takes) answered from the store, the answer's JSON on stdout, its notes on stderr."""

from __future__ import annotations

import json

import click

from queries.api import run_query
from queries.errors import HitboardError

from .common import command_settings, shown, store_option
from .stats import _database

MAX_QUESTION = 1024 ** 2


@click.command()
@click.argument("source", type=click.File("r", encoding="utf-8"), default="-")
@store_option
def query(source, store):
    """Answer the Stats API question in SOURCE (a JSON file; - or none: stdin)."""
    text = source.read(MAX_QUESTION + 1)
    if len(text) > MAX_QUESTION:
        raise HitboardError(f"the question is over {MAX_QUESTION:,} characters")
    try:
        body = json.loads(text)
    except (ValueError, RecursionError):
        raise HitboardError('the question must be JSON: {"site_id": ..., "metrics": '
                            '[...], "date_range": ...}') from None
    settings = command_settings(store=store)
    with _database(store, read_only=True) as db:
        answer = run_query(db, body, settings.events_ttl_days)
    click.echo(json.dumps(answer))
    for note in answer["meta"]["approximate"]:
        click.echo(shown(f"note: {note}"), err=True)


COMMANDS = (query,)
