"""What the historical page shows, computed from the URL alone (no Dash in here).

:func:`history_view` reads a URL once per cache bucket into a :class:`View`: the shell,
the controls and the query value (``queries.reads.query.Query``: site, range, zone,
conditions, comparison) that every callback of the page is handed, so the chart, its
totals, the CSV, the KPIs, the panels and the notes all describe the same view;
:func:`compute_view` adds the charts it draws, read through the shared cache."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, replace

import pandas as pd
from pymongo.errors import PyMongoError

import queries
from dashboard import reads
from dashboard.ranges import ALL_TIME, Period, period
from dashboard.state import ShellState, encode, parse_search
from queries import validation
from queries.reads.history import Chart, chart_of
from queries.reads.query import PAGE, Condition, Query
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
    q: Query | None = None                   # what it counts (None: no site to show)

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


def history_view(search: str | None) -> View:
    """The view a URL asks for, read once per cache bucket and shared by every callback
    of the page (and every viewer of the same URL). Raises what the URL gets wrong (a
    zone, a range, a filter): each callback says it, or leaves it to the page's alert."""
    query = parse_search(search)
    # Keyed by the query as the page writes it: the layout's and the browser's alike.
    return reads.derived(_read_url, encode(query), given={"query": query},
                         seconds=reads.history_seconds())


def _read_url(_db, _search: str, query: dict) -> View:
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
    before = comparison_period(query, shown, shell.tz) if controls.compare else None
    q = Query(site, shown.start, shown.end, shown.granularity, shell.tz,
              conditions_of(shell.pages, options), options.humans, options.assets,
              controls.metric, None if before is None else (before.start, before.end),
              reads.now(seconds))
    return View(shell, controls, site, shown, known_sites=known, options=options,
                before=before, query=query, q=q,
                incomplete=ends_inside_a_bucket(shown, shell.tz))


def conditions_of(pages: tuple[str, ...], options: Options) -> tuple[Condition, ...]:
    """The URL's conditions on the hits: its pages (any of them), then its filter."""
    found = [Condition(PAGE, tuple(pages))] if pages else []
    if options.filter is not None:
        by, value = options.filter
        found.append(Condition(by, (value,)))
    return tuple(found)


def compute_view(search: str | None) -> View:
    """The view a URL asks for with its charts (and the compared period's), each one
    read through the shared cache."""
    view = history_view(search)
    if view.q is None:
        return view
    current = read_chart(view.q)
    before = view.q.before()
    compared = None if before is None else read_chart(before)
    shown = Period(view.period.start, view.period.end, current.granularity)
    return replace(view, chart=current, compared=compared, period=shown)


def read_chart(q: Query) -> Chart:
    """A view's chart, one read shared through the cache (by every view that draws the
    same thing: the assets toggle and the comparison do not change it)."""
    key = replace(q, assets=False, compared=None)
    return reads.shared(chart_of, key, seconds=reads.history_seconds())


def ends_inside_a_bucket(shown: Period, tz: str) -> bool:
    """True when the period stops before its last bucket ends (today so far, the
    current hour): that bucket is still filling up."""
    edges = bucket_edges(shown.start, shown.end, shown.granularity, validation.timezone(tz))
    return edges[-1] > shown.end
