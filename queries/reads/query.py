"""One History view as a value: what it counts (site, range, zone, granularity, the
conditions on the hits), what it compares with, and which stored representation answers
each part of the screen.

Built once per URL (``dashboard/pages/history/url.py``) and handed to every callback of
the page, so the chart, the KPIs and every panel read the population the value names,
or say which one they show (``follows``). As in Plausible's ``Query``, a page, a
dimension's value and a goal are all the same thing: a :class:`Condition` on the hits,
and the view counts the hits that meet all of them.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace

PAGE = "page"    # the request's path
GOAL = "goal"    # a goal of the site (an event's name or a page pattern)
HITS = "hits"

# The stored representations a part of the view can be read from (ARCHITECTURE.md).
STATS = "statistics"          # stats.daily / stats.monthly: hits per page, to the minute
COUNTERS = "counters"         # dims.*: each dimension's values alone, any range
EVENTS = "raw events"         # events.buckets: any combination, within their retention
VISITS = "visits"             # visits.*: the site's visits, entry and exit pages, goals

# The parts of a History screen.
CHART, KPIS, PANELS, SHARE, VISIT_KPIS, ENTRY, EXIT, GOALS = (
    "chart", "kpis", "panels", "share", "visit_kpis", "entry", "exit", "goals")


@dataclass(frozen=True)
class Condition:
    """The hits whose ``dimension`` is one of ``values``: a page (any of several), a
    referrer, a status code, a goal..."""

    dimension: str
    values: tuple[str, ...]

    @property
    def value(self) -> str:
        return self.values[0]

    @property
    def label(self) -> str:
        """``referrer = news.example``; ``page = /a or /b``."""
        return f"{self.dimension} = {' or '.join(self.values)}"


@dataclass(frozen=True)
class Reading:
    """How a part of the view is read: the representation and the conditions it
    applies (fewer than the view's when the representation cannot combine them)."""

    source: str
    conditions: tuple[Condition, ...]


@dataclass(frozen=True)
class Query:
    """A History view: the hits of ``site`` over [``start``, ``end``) per
    ``granularity`` of ``tz`` that meet every one of ``conditions``, people's alone if
    ``humans``; static files among the top pages only with ``assets``; ``compared``:
    the period it is compared with (its start and end), if any; ``now``: the instant the
    reads are as of (the cache bucket's start)."""

    site: str
    start: dt.datetime
    end: dt.datetime
    granularity: str
    tz: str = "UTC"
    conditions: tuple[Condition, ...] = ()
    humans: bool = True
    assets: bool = False
    metric: str = HITS
    compared: tuple[dt.datetime, dt.datetime] | None = None
    now: dt.datetime | None = None

    def condition(self, dimension: str) -> Condition | None:
        return next((c for c in self.conditions if c.dimension == dimension), None)

    @property
    def pages(self) -> tuple[str, ...]:
        """The pages the view is limited to (none: every page)."""
        found = self.condition(PAGE)
        return found.values if found else ()

    @property
    def filter(self) -> tuple[str, str] | None:
        """The one condition on a counted dimension (``referrer = news.example``) as
        ``(dimension, value)``, if any: the counters answer it alone."""
        found = next((c for c in self.conditions if c.dimension not in (PAGE, GOAL)), None)
        return None if found is None else (found.dimension, found.value)

    @property
    def goal(self) -> str | None:
        found = self.condition(GOAL)
        return found.value if found else None

    @property
    def label(self) -> str:
        """What the view counts, in words: ``referrer = news.example and page = /a``."""
        return " and ".join(c.label for c in self.conditions)

    def before(self) -> Query | None:
        """The same view over the compared period (None: no comparison)."""
        if self.compared is None:
            return None
        return replace(self, start=self.compared[0], end=self.compared[1], compared=None)

    def reads(self, part: str) -> Reading:
        """Which representation answers ``part`` of the screen, and under which of the
        view's conditions. The statistics count pages (any of several) to the minute;
        the counters one dimension's values, any range; the two together, or a
        dimension's combination with any other (the panels under a filter), only the raw
        events. Visits (their KPIs, a chart of a visit metric, entry and exit pages) are
        the site's, or a chart's pages'; goals apply only to the goals panel, where they
        name the goal shown."""
        hits = tuple(c for c in self.conditions if c.dimension != GOAL)
        dims = tuple(c for c in hits if c.dimension != PAGE)
        pages = self.condition(PAGE)
        one_value = not pages and len(dims) == 1
        if part == CHART and self.metric != HITS:
            return Reading(VISITS, (pages,) if pages else ())
        if part in (CHART, SHARE):
            if not dims:
                return Reading(STATS, hits)
            return Reading(COUNTERS if one_value else EVENTS, hits)
        if part == KPIS:      # visitors and the 4xx/5xx rate; hits are the chart's
            return Reading(COUNTERS if not hits or one_value else EVENTS, hits)
        if part == PANELS:
            return Reading(EVENTS if hits else COUNTERS, hits)
        if part in (VISIT_KPIS, ENTRY, EXIT):
            return Reading(VISITS, ())
        if part == GOALS:
            goal = self.condition(GOAL)
            return Reading(VISITS, (goal,) if goal else ())
        raise ValueError(f"no part {part!r} in a History view")

    def follows(self, part: str) -> bool:
        """Whether ``part`` counts the view's own population (else it says which)."""
        return self.reads(part).conditions == self.conditions
