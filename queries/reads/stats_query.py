"""One Stats API question as a value (``POST /api/v2/query``, ``hitboard query``): the
site, the instants it covers, the metrics, the dimensions, the filters as a tree.

Built and checked by ``queries.api.parse`` from Plausible's v2 JSON; answered by
``stats_api``, which chooses the representation that can count it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

# Plausible's names of what hitboard holds -> the dimension counters' names.
COUNTED = {
    "event:page": "page", "visit:source": "referrer", "visit:utm_source": "utm_source",
    "visit:utm_medium": "utm_medium", "visit:utm_campaign": "utm_campaign",
    "visit:country": "country", "visit:browser": "browser", "visit:os": "os",
    "visit:device": "device", "http:status": "status", "http:bot": "bot",
}
VISIT_PAGES = {"visit:entry_page": "entry", "visit:exit_page": "exit"}
CUSTOM = ("event:goal", "event:name")           # and event:props:NAME
PROPS = "event:props:"
TIMES = {"time:hour": "hour", "time:day": "day", "time:week": "week",
         "time:month": "month"}
TIME = "time"

HIT_METRICS = ("hits", "visitors")
RAW_METRICS = (*HIT_METRICS, "pageviews")      # what raw events give under any filter
VISIT_METRICS = ("visits", "pageviews", "bounce_rate", "visit_duration", "views_per_visit")
EVENT_METRICS = ("events", "visitors", "conversion_rate")
METRICS = ("visitors", "visits", "pageviews", "views_per_visit", "bounce_rate",
           "visit_duration", "events", "conversion_rate", "hits")
OPERATORS = ("is", "is_not", "contains", "contains_not", "matches", "matches_not")
LOGICAL = ("and", "or", "not")


@dataclass(frozen=True)
class Match:
    """``[operator, dimension, values]``: a hit's ``dimension`` meets ``operator`` with
    one of ``values`` (``_not``: with none of them)."""

    operator: str
    dimension: str
    values: tuple[str, ...]

    @property
    def counted(self) -> str:
        return COUNTED.get(self.dimension) or VISIT_PAGES[self.dimension]


@dataclass(frozen=True)
class Logic:
    """``["and"|"or", [filters]]`` or ``["not", filter]``."""

    operator: str
    clauses: tuple[Match | Logic, ...]


Filter = Match | Logic


@dataclass(frozen=True)
class StatsQuery:
    """Hits of ``site`` over [``start``, ``end``) seen in ``tz``; ``dimension`` the one
    they are grouped by (None: the totals, or several in ``dimensions``), ``granularity``
    a time dimension's buckets;
    bots counted only if ``bots``; ``now``: the instant the answer is as of."""

    site: str
    start: dt.datetime
    end: dt.datetime
    tz: str
    metrics: tuple[str, ...]
    dimension: str | None = None
    granularity: str | None = None
    filters: tuple[Filter, ...] = ()
    bots: bool = False
    now: dt.datetime | None = None
    goals: tuple = field(default=(), compare=False)
    dimensions: tuple[str, ...] = ()      # every dimension asked, in order (several: a grid)

    @property
    def humans(self) -> bool:
        """People alone, as History and Plausible count, unless bots are asked for or
        the bot dimension itself is read or filtered on."""
        return not (self.bots or self.dimension == "http:bot" or "http:bot" in self.dimensions
                    or any("http:bot" in dimensions_of(f) for f in self.filters))


def dimensions_of(node: Filter) -> set[str]:
    if isinstance(node, Match):
        return {node.dimension}
    return set().union(*(dimensions_of(c) for c in node.clauses))


def only_on(filters: tuple[Filter, ...], dimension: str) -> bool:
    """Whether every condition of ``filters`` tests ``dimension`` alone."""
    return bool(filters) and all(dimensions_of(f) == {dimension} for f in filters)


def simple_is(filters: tuple[Filter, ...]) -> Match | None:
    """The one filter, when it is a single ``is`` on one value (counters answer it)."""
    if len(filters) == 1 and isinstance(filters[0], Match) \
            and filters[0].operator == "is" and len(filters[0].values) == 1:
        return filters[0]
    return None
