"""A History view's breakdown panels and bot share: which representation answers them.

Without a filter the panels come from the dimension counters (any range, exact over
whole UTC hours, the cut ends from raw events: ``queries.dimensions.spans``). A filter of
one dimension (``referrer = news.example``) combines two dimensions, which the counters
do not hold together, so the other panels come from the raw events, limited to their
retention: ``events_hits`` says how many of the filtered hits they saw. The bots' share
is the filtered hits' (the counters count bots apart by every value), else the whole
site's, from the statistics.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, replace

import pandas as pd

from ..dimensions import reads as dims
from ..dimensions.assets import kind
from ..dimensions.classify import BOT
from ..dimensions.pages import PAGES_READ, ranked_pages
from ..dimensions.spans import approximate_note
from ..imports import reads as imported
from ..stats.series import series
from .filtered import Filtered, matching_breakdowns
from .history import Filter
from .query import COUNTERS, PAGE, SHARE, STATS, Condition, Query

NOT_FOUND = "notfound"


@dataclass(frozen=True)
class Breakdowns:
    """One frame per dimension (``value``, ``hits``, ``visitors``; pages as ``PAGE``),
    the most requested missing paths (``path``, ``hits``), what the reader should know
    about where the numbers come from, and, under a filter, which raw events answered
    (``source``, e.g. "from the raw events of the last 30 days") and how many of its
    hits they hold (``events_hits``; None: the counters answered)."""

    frames: dict[str, pd.DataFrame]
    not_found: pd.DataFrame
    notes: tuple[str, ...] = ()
    source: str | None = None
    events_hits: int | None = None


def breakdowns(db, site: str, start: dt.datetime, end: dt.datetime, tz: str,
               dimensions: Sequence[str], filter: Filter | None = None,
               humans: bool = True, assets: bool = False, n: int = 10,
               now: dt.datetime | None = None) -> Breakdowns:
    """The top ``n`` values of each of ``dimensions`` and of pages in [start, end),
    people's alone if ``humans``, static files among pages only with ``assets``; a
    filter's hits alone if given."""
    if filter is not None:
        return _matched(db, site, start, end, dimensions, (Condition(*_pair(filter)),),
                        humans, assets, n)
    notes = []
    ranked = ranked_pages(db, site, start, end, n=n, humans=humans, assets=assets, now=now)
    frames = {PAGE: ranked.reset_index().rename(columns={PAGE: "value"})}
    if ranked.attrs["note"]:
        notes.append(ranked.attrs["note"])
    for dim in dimensions:
        frames[dim] = dims.breakdown(db, site, dim, start, end, n=n, humans=humans, now=now)
    not_found = dims.top_not_found(db, site, start, end, humans=humans, now=now)
    status = frames.get("status")
    if status is None:
        status = dims.breakdown(db, site, "status", start, end, humans=humans, now=now)
    if humans and status.attrs.get("unsplit"):
        notes.append(f"{status.attrs['unsplit']:,} bot hits in this range were stored "
                     "before bots were counted apart: the panels and KPIs count them as "
                     "humans.")
    if not status.attrs.get("exact", True):
        notes.append(approximate_note(status.attrs["counted"], tz, "The panels") + ".")
    return Breakdowns(frames, not_found, tuple(notes))


def _pair(filter: Filter) -> tuple[str, tuple[str]]:
    return filter[0], (filter[1],)


def breakdowns_of(db, query: Query, dimensions: Sequence[str], n: int = 10) -> Breakdowns:
    """The panels of a History view: the counters without a condition, else the raw
    events of the hits meeting all of them (a page is a condition like a referrer)."""
    if not query.conditions:
        found = breakdowns(db, query.site, query.start, query.end, query.tz, dimensions,
                           None, query.humans, query.assets, n, now=query.now)
        return _with_imported(db, query, found, n)
    return _matched(db, query.site, query.start, query.end, dimensions, query.conditions,
                    query.humans, query.assets, n)


def _with_imported(db, query: Query, found: Breakdowns, n: int) -> Breakdowns:
    """A view per day or longer: the imported days' rows added to the panels that have
    them (each panel's top ``n`` counted traffic merged with them, then cut again)."""
    if query.granularity not in imported.DAY_GRANULARITIES:
        return found
    frames, days = dict(found.frames), 0
    for dim, frame in found.frames.items():
        counts, found_days = imported.breakdown_counts(db, query.site, dim, query.start,
                                                       query.end, query.tz)
        days = max(days, found_days)
        frames[dim] = imported.add_breakdown(frame, counts).head(n)
    if not days:
        return found
    note = (f"The panels add {days:,} imported day{'s' * (days != 1)}: their pageviews as "
            "hits, their visitors summed (approximate).")
    return replace(found, frames=frames, notes=(*found.notes, note))


def matched_panels(db, site: str, start, end, dimensions: Sequence[str],
                   conditions: Sequence[Condition], humans: bool) -> Filtered:
    """The one grouped read of raw events the panels, the KPIs and the bot share of a
    view with conditions all count from (its pages up to ``PAGES_READ``)."""
    return matching_breakdowns(db, site, tuple(conditions), start, end,
                               (*dimensions, NOT_FOUND), humans_only=humans,
                               n=PAGES_READ)


def _matched(db, site: str, start, end, dimensions: Sequence[str],
             conditions: Sequence[Condition], humans: bool, assets: bool, n: int
             ) -> Breakdowns:
    """The panels of the hits meeting ``conditions``, from raw events (one grouped
    read)."""
    found = matched_panels(db, site, start, end, dimensions, conditions, humans)
    named = next((c.values for c in conditions if c.dimension == PAGE), ())
    return matched_breakdowns(found, dimensions, assets, n, named)


def matched_breakdowns(found: Filtered, dimensions: Sequence[str], assets: bool, n: int,
                       named: Sequence[str] = ()) -> Breakdowns:
    """The panels of :func:`matched_panels`' read: the top ``n`` of each, static files
    among pages only with ``assets`` or when a condition names them (``named``)."""
    frames = {d: found.panels[d].head(n) for d in dimensions}
    pages = found.panels[PAGE]
    if not assets:
        pages = pages[[kind(v) != "asset" or v in named for v in pages["value"]]]
    frames[PAGE] = pages.head(n).reset_index(drop=True)
    not_found = found.panels[NOT_FOUND].head(n).rename(
        columns={"value": "path"})[["path", "hits"]]
    return Breakdowns(frames, not_found, source=found.note, events_hits=found.hits)


def bot_share(db, site: str, start: dt.datetime, end: dt.datetime,
              filter: Filter | None = None, now: dt.datetime | None = None) -> float:
    """Bots' share of the hits of [start, end): the filtered ones' under a filter, else
    the whole site's."""
    if filter is not None:
        return dims.value_bot_share(db, site, *filter, start, end, now=now)
    return _stats_bot_share(db, site, start, end)


def bot_share_of(db, query: Query) -> float:
    """Bots' share of the hits a view's conditions name (whatever its ``humans``): the
    statistics' for pages, the counters' for one dimension's value, the raw events'
    for a combination."""
    reading = query.reads(SHARE)
    if reading.source == STATS:
        return _stats_bot_share(db, query.site, query.start, query.end, query.pages)
    if reading.source == COUNTERS:
        return bot_share(db, query.site, query.start, query.end, query.filter, query.now)
    found = matching_breakdowns(db, query.site, query.conditions, query.start, query.end,
                                ("bot",), humans_only=False)
    bots = int(found.panels["bot"].loc[found.panels["bot"]["value"] == BOT, "hits"].sum())
    return bots / found.hits if found.hits else 0.0


def _stats_bot_share(db, site: str, start, end, pages: Sequence[str] = ()) -> float:
    everyone = int(series(db, site, start, end, "day", list(pages)).to_numpy().sum())
    people = int(series(db, site, start, end, "day", list(pages), humans=True)
                 .to_numpy().sum())
    return (everyone - people) / everyone if everyone else 0.0
