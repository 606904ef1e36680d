"""What the historical page shows, computed from the URL alone (no Dash in here), so
the chart, the totals table and the CSV download all read the same cached frames."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from functools import partial

import pandas as pd
from pymongo.errors import PyMongoError

import queries
from dashboard import reads
from dashboard.ranges import ALL_TIME, Period, period
from dashboard.state import ShellState, parse_search
from queries import validation
from queries.reads.history import HITS, Chart, chart, counts_people, visit_chart
from queries.stats.series import bucket_edges

from .compare import comparison_period
from .url import Controls, Options, controls_of, shown_period, site_span


@dataclass(frozen=True)
class View:
    """What the page draws, computed once and shared by the chart, the table and the CSV:
    ``chart`` (and ``compared``, the period it is compared with) from one read each."""

    shell: ShellState
    controls: Controls
    site: str | None
    period: Period | None
    chart: Chart | None = None
    compared: Chart | None = None
    incomplete: bool = False
    known_sites: tuple[str, ...] = ()
    options: Options | None = None
    before: Period | None = None             # the period ``compared`` shows
    query: dict = field(default_factory=dict)   # the URL, parsed once per render

    @property
    def unknown_site(self) -> bool:
        """The URL names a site the store has no statistics for."""
        return self.site is not None and self.period is None

    @property
    def current(self) -> pd.DataFrame | None:
        return None if self.chart is None else self.chart.frame

    @property
    def previous(self) -> pd.DataFrame | None:
        return None if self.compared is None else self.compared.frame

    @property
    def source(self) -> tuple[str, str] | None:
        """The filter whose hits the chart draws, if any."""
        return None if self.options is None else self.options.filter

    @property
    def humans(self) -> bool:
        return self.chart is not None and self.chart.humans


def picker_dates(controls: Controls, tz: str, site: str | None = None
                 ) -> tuple[str | None, str | None]:
    """The local dates the picker shows for a view (its end date is included)."""
    try:
        span = site_span(site) if controls.preset == ALL_TIME else None
        shown = period(controls.preset, "day", dt.datetime.now(dt.UTC), tz, controls.start,
                       controls.end, span)
    except (queries.HitboardError, PyMongoError):
        return None, None
    zone = validation.timezone(tz)
    last = (shown.end - dt.timedelta(microseconds=1)).astimezone(zone)
    return shown.start.astimezone(zone).date().isoformat(), last.date().isoformat()


def compute_view(search: str | None) -> View:
    """Read what the URL asks for, through the shared cache."""
    query = parse_search(search)
    shell, controls = ShellState.from_query(query), controls_of(query)
    site = reads.resolve_site(shell.site)
    if site is None:
        return View(shell, controls, None, None, query=query)
    seconds = reads.history_seconds()
    shown = shown_period(query)  # a bad zone or range is said first
    options = Options.from_query(query)
    known = tuple(reads.shared(queries.list_sites, seconds=seconds))
    if site not in known:
        return View(shell, controls, site, None, known_sites=known, query=query)
    drawn = read_chart if controls.metric == HITS else partial(read_visit_chart,
                                                                metric=controls.metric)
    current = drawn(site, shown, shell.tz, shell.pages, options, seconds)
    before = comparison_period(query, shown, shell.tz) if controls.compare else None
    compared = (None if before is None
                else drawn(site, before, shell.tz, shell.pages, options, seconds))
    shown = Period(shown.start, shown.end, current.granularity)
    return View(shell, controls, site, shown, current, compared,
                incomplete=ends_inside_a_bucket(shown, shell.tz), known_sites=known,
                options=options, before=before, query=query)


def read_chart(site: str, shown: Period, tz: str, pages: tuple[str, ...], options: Options,
               seconds: int) -> Chart:
    """The chart of a period: the pages (none: the whole site) or the filter's value,
    people's alone unless bots are included; one read, shared through the cache."""
    return reads.shared(chart, site, shown.start, shown.end, shown.granularity, tz=tz,
                        pages=() if options.filter else pages, filter=options.filter,
                        humans=counts_people(options.filter, options.bots),
                        now=reads.now(seconds), seconds=seconds)


def read_visit_chart(site: str, shown: Period, tz: str, pages: tuple[str, ...],
                     options: Options, seconds: int, metric: str) -> Chart:
    """A visit metric's chart of a period (people's: ``options`` do not apply), per hour
    at the finest; one read, shared through the cache."""
    return reads.shared(visit_chart, site, shown.start, shown.end, shown.granularity,
                        metric, tz=tz, pages=pages, seconds=seconds)


def ends_inside_a_bucket(shown: Period, tz: str) -> bool:
    """True when the period stops before its last bucket ends (today so far, the
    current hour): that bucket is still filling up."""
    edges = bucket_edges(shown.start, shown.end, shown.granularity, validation.timezone(tz))
    return edges[-1] > shown.end
