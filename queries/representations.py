"""The representations of a hit: where each is stored, what it answers and how long it
is kept. One table, read by the Data page (what each collection holds) and mirrored in
ARCHITECTURE.md (a test holds the two together)."""

from __future__ import annotations

from dataclasses import dataclass

from .dimensions import counters, sketches
from .events.custom import COLLECTION as CUSTOM_EVENTS
from .events.expired import COLLECTION as EXPIRED
from .imports.store import DAYS as IMPORTED_DAYS
from .rollups.build import BACKFILLED
from .stats import schema
from .visits.store import MONTHS, VISITS


@dataclass(frozen=True)
class Representation:
    name: str
    collections: tuple[str, ...]
    per: str            # one document per ...
    answers: str
    kept: str
    written_by: str


REPRESENTATIONS = (
    Representation(
        "pre-aggregated stats", (schema.DAILY, schema.MONTHLY),
        "site, page (* the whole site) and UTC day or month",
        "hits per minute, hour, day and month of a page or a site, bots apart", "for ever",
        "HitRecorder"),
    Representation(
        "dimension counters", counters.COLLECTIONS,
        "site and UTC hour, day or month, every dimension in it",
        "breakdowns (referrer, status, browser, OS, device, country, bot...), humans and "
        "bots", "for ever", "DimensionRecorder"),
    Representation(
        "visitor sketches", sketches.COLLECTIONS,
        "site, bucket and writing process", "distinct visitors over any range", "for ever",
        "DimensionRecorder"),
    Representation(
        "raw events", (schema.EVENTS, EXPIRED), "site, hour and write, in columns",
        "a page's breakdowns, filters, the recent feed, the rollups' source",
        "events_ttl_days", "EventWriter"),
    Representation(
        "rollups", (*schema.ROLLUPS.values(), BACKFILLED), "site and bucket, a row per page",
        "bytes, status classes and hits per week, month and year; top pages over long "
        "ranges", "for ever", "the rollup job"),
    Representation(
        "visits", (VISITS, MONTHS),
        "site and UTC day, an hour's rows replaced whole (and month, its pages summed)",
        "visits, bounces, visit duration, views per visit per quarter hour; entry and "
        "exit pages; custom events per name, page and property value (events, visitors, "
        "revenue); pageviews and their visitors per page (page goals)", "for ever",
        "the rollup job, from events"),
    Representation(
        "hits kept apart", (schema.APART,), "site, hour and write, in columns",
        "the Sources view: a site's other source beside its counted one", "events_ttl_days",
        "EventWriter (the beacon, an ingest)"),
    Representation(
        "custom events", (CUSTOM_EVENTS,), "event, as sent",
        "the visits' and custom events' recompute", "events_ttl_days",
        "EventWriter (the beacon)"),
    Representation(
        "imported days", (IMPORTED_DAYS,), "site and day of its zone, as imported",
        "visitors, visits, pageviews, bounces, duration and breakdowns of days another "
        "tool counted (Plausible's CSV layout), added per day or longer", "for ever",
        "hitboard import"),
)


def holding(collection: str) -> Representation | None:
    """The representation a collection stores; None for bookkeeping (sites, settings,
    checkpoints, notes...)."""
    return next((r for r in REPRESENTATIONS if collection in r.collections), None)
