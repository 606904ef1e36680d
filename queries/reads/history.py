"""A History view's chart and KPIs, counting one population over exactly its range.

``chart`` draws hits per bucket: each page's, or the whole site's (``*``), people's
alone unless ``humans`` is false (the statistics count bots beside hits, to the minute,
so any granularity and any zone is exact); or, under a filter (``referrer =
news.example``), that value's hits from the dimension counters (per hour at the finest;
exact where the raw events of cut hours are kept, see ``queries.dimensions.spans``).
``figures`` are the KPIs of the same range and population: hits (the chart's total, so
the two never disagree), distinct visitors, and the share of 4xx/5xx answers;
``visit_figures`` and ``visit_pages`` those of the visits (people's, the whole site's;
imported days added per day or longer, ``queries.imports.reads``);
``goal_figures`` the site's goals.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, replace

import pandas as pd

from .. import validation
from ..custom import reads as custom_reads
from ..dimensions import reads as dims
from ..dimensions.classify import BOT
from ..dimensions.spans import cover
from ..imports import reads as imported
from ..stats.series import series
from ..stats.sites import site_settings
from ..visits import reads as visit_reads
from ..visits.reads import Totals
from .filtered import Filtered, filtered_breakdowns, matching_breakdowns, matching_series
from .query import CHART, COUNTERS, EVENTS, KPIS, STATS, Query

Filter = tuple[str, str]
STATUS = "status"
HITS = "hits"
METRICS = (HITS, *visit_reads.METRICS)
METRIC_LABELS = {HITS: "Hits", "visits": "Visits", "pageviews": "Pageviews",
                 "bounce_rate": "Bounce rate", "visit_duration": "Visit duration",
                 "views_per_visit": "Views per visit"}
# What a visit metric's chart draws per page: the page's visits entering there, its
# pageviews, their bounce rate and duration; views per visit are the whole site's.
SITE_ONLY = ("views_per_visit",)


@dataclass(frozen=True)
class Chart:
    """Hits per bucket (index ``time``; a column per page, ``*`` for the whole site, or
    the filter's ``label``), of people alone if ``humans``. Not ``exact``: a filtered
    chart counted over ``counted``, the nearest whole UTC hours. ``unsplit``: hits
    stored before bots were counted apart, counted as people."""

    frame: pd.DataFrame
    granularity: str
    humans: bool
    filter: Filter | None = None
    exact: bool = True
    counted: tuple[dt.datetime, dt.datetime] | None = None
    unsplit: int = 0
    metric: str = HITS
    totals: dict[str, float | None] | None = None   # a visit metric's, per column
    source: str = STATS         # the representation it is drawn from (``query.py``)

    @property
    def total(self) -> int:
        """The hits (a visit metric: the visits, or pageviews) the chart counts."""
        if self.metric == HITS:
            return int(self.frame.to_numpy().sum())
        return int(self.frame.attrs.get("counted", 0))


def label(filter: Filter | None, humans: bool) -> str:
    """The chart's one column when it is not pages': the filter, or people."""
    if filter is not None:
        return f"{filter[0]} = {filter[1]}"
    return "Humans" if humans else "Whole site"


def counts_people(filter: Filter | None, bots: bool) -> bool:
    """Whether a view counts people alone: unless bots are asked for, or the filter is on
    the bot dimension itself (it counts what it names)."""
    return not bots and not (filter is not None and filter[0] == "bot")


def chart(db, site: str, start: dt.datetime, end: dt.datetime, granularity: str,
          tz: str = "UTC", pages: Sequence[str] = (), filter: Filter | None = None,
          humans: bool = True, now: dt.datetime | None = None) -> Chart:
    """The chart of [start, end) per ``granularity`` of ``tz``: pages (none: the whole
    site) or a filter's value (per hour at the finest), people's alone if ``humans``."""
    if filter is None:
        frame = series(db, site, start, end, granularity, list(pages), tz, humans=humans)
        if not pages and humans:
            frame = frame.rename(columns={"*": label(None, True)})
        return Chart(frame, granularity, humans, unsplit=frame.attrs.get("unsplit", 0))
    by, value = filter
    drawn = "hour" if granularity == "minute" else granularity
    frame = dims.filtered_series(db, site, by, value, start, end, drawn, tz, humans=humans,
                                 now=now)
    counted = None if frame.attrs["exact"] else cover(db, site, start, end, now).counted
    return Chart(frame.rename(columns={"hits": label(filter, humans)}), drawn, humans, filter,
                 frame.attrs["exact"], counted, frame.attrs.get("unsplit", 0))


@dataclass(frozen=True)
class Figures:
    """The KPIs of one range: hits, distinct visitors (None: not counted, as in a store
    older than visitors), the share of 4xx and 5xx among the hits counted with a status
    (``errors_from_events``: the filtered hits' own, from raw events), and whether the
    visitors are exactly the range's; ``visitors_error``: theirs as counted from sketches
    (0: exact, see ``queries.dimensions.sketches.Estimate``)."""

    hits: int
    visitors: int | None
    errors: float | None
    errors_from_events: bool = False
    visitors_exact: bool = True
    visitors_error: int = 0
    visitors_from_events: bool = False
    visitors_imported: bool = False     # imported days' visitors summed in: approximate

def figures(db, site: str, start: dt.datetime, end: dt.datetime, hits: int,
            filter: Filter | None = None, humans: bool = True,
            now: dt.datetime | None = None, matched: Filtered | None = None) -> Figures:
    """The KPIs of [start, end) whose hits are ``hits`` (the chart's total: one
    computation), for people alone if ``humans``, of the filter's hits if given
    (``matched``: the raw events' read of them with their status, if made already)."""
    if filter is None:
        status = dims.breakdown(db, site, STATUS, start, end, humans=humans, now=now)
        if not int(status["hits"].sum()):     # no dimension counted here (an old store)
            return Figures(hits, None, None)
        seen = dims.visitors(db, site, start, end, humans, now)
        return Figures(hits, seen.n, error_rate(status), visitors_exact=seen.exact,
                       visitors_error=seen.error)
    by, value = filter
    found = dims.breakdown(db, site, by, start, end, humans=humans, now=now)
    row = found[found["value"] == value]
    visitors = None if not len(row) or pd.isna(row["visitors"].iloc[0]) else int(
        row["visitors"].iloc[0])
    if not len(row):
        visitors = 0
    error = int(row["visitors_error"].fillna(0).iloc[0]) if len(row) else 0
    errors, from_events = _filtered_errors(db, site, filter, start, end, hits, humans, now,
                                           matched)
    return Figures(hits, visitors, errors, from_events, found.attrs["visitors_exact"], error)


def error_rate(status: pd.DataFrame) -> float | None:
    """The share of 4xx and 5xx among the hits with a status code."""
    coded = status[status["value"].str.fullmatch(r"\d{3}")]
    total = int(coded["hits"].sum())
    bad = int(coded.loc[coded["value"].str[0].isin(["4", "5"]), "hits"].sum())
    return bad / total if total else None


def _filtered_errors(db, site: str, filter: Filter, start, end, hits: int, humans: bool,
                     now, matched: Filtered | None = None) -> tuple[float | None, bool]:
    """The 4xx/5xx rate of the filtered hits, and whether it comes from raw events. A
    status filter is its own rate; the counters count bots apart by every value; any
    other value's statuses are not counted with it (two dimensions), so they come from
    the raw events, within their retention."""
    by, value = filter
    if not hits:
        return None, False
    if by == STATUS:
        return (float(value[0] in "45"), False) if value.isdigit() and len(value) == 3 \
            else (None, False)
    if by == "bot":
        status = dims.breakdown(db, site, STATUS, start, end, humans=value != BOT,
                                bots=value == BOT, now=now)
        return error_rate(status), False
    found = matched or filtered_breakdowns(db, site, by, value, start, end, (STATUS,),
                                           humans_only=humans)
    return (error_rate(found.panels[STATUS]) if found.hits else None), True


def visit_figures(db, site: str, start: dt.datetime, end: dt.datetime,
                  now: dt.datetime | None = None, tz: str = "UTC",
                  granularity: str | None = None) -> Totals:
    """The visits of [start, end) (people's, the whole site's): visits, bounces,
    duration, views, and the pageviews made in the range; in a view per day or longer,
    the imported days whose midnight of ``tz`` it holds added."""
    found = visit_reads.totals(db, site, start, end, now)
    if granularity not in imported.DAY_GRANULARITIES:
        return found
    days = [totals for _, totals in imported.imported(db, site, start, end, tz)]
    if not days:
        return found
    added = {name: sum(t.get(name, 0) for t in days)
             for name in ("visits", "bounces", "visit_duration", "pageviews")}
    return found._replace(visits=found.visits + added["visits"],
                          bounces=found.bounces + added["bounces"],
                          duration_ms=found.duration_ms + 1000 * added["visit_duration"],
                          views=found.views + added["pageviews"],
                          pageviews=found.pageviews + added["pageviews"])


def imported_days(db, site: str, start: dt.datetime, end: dt.datetime, tz: str,
                  granularity: str) -> int:
    """How many imported days a view of [start, end) adds (none under a day)."""
    if granularity not in imported.DAY_GRANULARITIES:
        return 0
    return len(imported.imported(db, site, start, end, tz))


def visit_pages(db, site: str, start: dt.datetime, end: dt.datetime, n: int = 10
                ) -> dict[str, pd.DataFrame]:
    """The top ``n`` entry and exit pages of the visits of [start, end): ``value``,
    ``visits``, ``bounce_rate``, ``visit_duration``."""
    return {kind: visit_reads.pages(db, site, start, end, kind, n)
            for kind in visit_reads.PAGE_KINDS}


def goal_figures(db, site: str, start: dt.datetime, end: dt.datetime,
                 now: dt.datetime | None = None) -> pd.DataFrame:
    """The site's goals over [start, end), in the order they were added: ``value``,
    ``conversions``, ``visitors``, ``conversion_rate`` (% of the range's people),
    ``revenue`` (per currency)."""
    return custom_reads.goals(db, site, start, end, site_settings(db, site).goals, now)


def visit_chart(db, site: str, start: dt.datetime, end: dt.datetime, granularity: str,
                metric: str, tz: str = "UTC", pages: Sequence[str] = ()) -> Chart:
    """A visit metric per bucket (hour at the finest: visits are kept per quarter hour):
    the whole site's, or each page's (visits entering there, its pageviews), with the
    range's own figure per column in ``totals`` (a rate of the whole range, not a sum)."""
    if metric not in visit_reads.METRICS:
        raise validation.InvalidRangeError(f"the chart draws one of {', '.join(METRICS)}")
    drawn = "hour" if granularity == "minute" else granularity
    columns = [None] if not pages or metric in SITE_ONLY else list(pages)
    frames, totals, counted = {}, {}, 0
    for page in columns:
        name = METRIC_LABELS[metric] if page is None else page
        found = visit_reads.series(db, site, start, end, drawn, tz, page)
        if page is None:
            imported.add_visits(db, site, found, start, end, drawn, tz)
        frames[name] = found[metric]
        summed = visit_reads.with_metrics(found[list(visit_reads.SUMS)].sum().to_frame().T)
        totals[name] = None if pd.isna(summed[metric].iloc[0]) else float(
            summed[metric].iloc[0])
        counted += int(found["visits"].sum() + found["pageviews"].sum())
    frame = pd.DataFrame(frames)
    frame.attrs["counted"] = counted
    return Chart(frame, drawn, True, exact=bool(found.attrs["exact"]), metric=metric,
                 totals=totals)


def chart_of(db, query: Query) -> Chart:
    """The chart of a History view, from the representation that answers its
    conditions (``Query.reads``): the statistics for the whole site or pages (a column
    each), the counters for one dimension's value, the raw events for a combination
    (per hour at the finest, as the counters); a visit metric from the visits (the
    whole site's, or a column per page)."""
    q = query
    if q.metric != HITS:
        return visit_chart(db, q.site, q.start, q.end, q.granularity, q.metric, tz=q.tz,
                           pages=q.pages)
    source = q.reads(CHART).source
    if source == STATS:
        return chart(db, q.site, q.start, q.end, q.granularity, q.tz, q.pages,
                     humans=q.humans, now=q.now)
    if source == COUNTERS:
        found = chart(db, q.site, q.start, q.end, q.granularity, q.tz, filter=q.filter,
                      humans=q.humans, now=q.now)
        return Chart(found.frame, found.granularity, found.humans, found.filter,
                     found.exact, found.counted, found.unsplit, source=COUNTERS)
    drawn = "hour" if q.granularity == "minute" else q.granularity
    frame = matching_series(db, q.site, q.conditions, q.start, q.end, drawn, q.tz, q.humans)
    return Chart(frame.rename(columns={"hits": q.label}), drawn, q.humans, q.filter,
                 source=EVENTS)


def figures_of(db, query: Query, hits: int, matched: Filtered | None = None) -> Figures:
    """The KPIs of a History view whose chart counts ``hits``: the counters' without a
    condition or with one dimension's value; else (pages, a combination) the raw events'
    visitors and 4xx/5xx rate of the hits meeting them (``matched``: that read, when the
    panels made it already), no visitors when the events hold fewer of its hits."""
    q = query
    if q.reads(KPIS).source == COUNTERS:
        found = figures(db, q.site, q.start, q.end, hits, q.filter, q.humans, q.now, matched)
        if q.conditions or q.granularity not in imported.DAY_GRANULARITIES:
            return found
        days = imported.imported(db, q.site, q.start, q.end, q.tz)
        if not days:
            return found
        counted = found.visitors or 0        # None: no counters in the range
        added = sum(totals.get("visitors", 0) for _, totals in days)
        return replace(found, visitors=counted + added,
                       visitors_imported=len(days) > 1 or counted > 0)
    if matched is None:
        matched = matching_breakdowns(db, q.site, q.conditions, q.start, q.end, (STATUS,),
                                      humans_only=q.humans)
    errors = error_rate(matched.panels[STATUS]) if matched.hits else None
    # Raw events kept for fewer hits than counted (older ones expired): their visitors
    # would be some of the view's, not all of them.
    visitors = matched.visitors if matched.hits >= hits else None
    return Figures(hits, visitors, errors, errors_from_events=True,
                   visitors_from_events=True)
