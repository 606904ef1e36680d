"""What the historical page shows, computed from the URL alone (no Dash in here), so
the chart, the totals table and the CSV download all read the same cached frames."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pandas as pd

import queries
from queries import validation
from queries.stats.series import bucket_edges

from . import breakdown_view, reads
from .compare_view import comparison_period
from .history_url import Controls, shown_period
from .ranges import Period, period
from .state import ShellState, parse_search


@dataclass(frozen=True)
class View:
    """What the page draws, computed once and shared by the chart, the table and the CSV."""

    shell: ShellState
    controls: Controls
    site: str | None
    period: Period | None
    current: pd.DataFrame | None = None
    previous: pd.DataFrame | None = None
    incomplete: bool = False
    known_sites: tuple[str, ...] = ()
    source: tuple[str, str] | None = None   # the dimension's value the chart shows, if any
    humans: bool = False

    @property
    def unknown_site(self) -> bool:
        """The URL names a site the store has no statistics for."""
        return self.site is not None and self.period is None


def picker_dates(controls: Controls, tz: str) -> tuple[str | None, str | None]:
    """The local dates the picker shows for a view (its end date is included)."""
    try:
        shown = period(controls.preset, "day", dt.datetime.now(dt.UTC), tz, controls.start,
                       controls.end)
    except queries.HitboardError:
        return None, None
    zone = validation.timezone(tz)
    last = (shown.end - dt.timedelta(microseconds=1)).astimezone(zone)
    return shown.start.astimezone(zone).date().isoformat(), last.date().isoformat()


def compute_view(search: str | None) -> View:
    """Read what the URL asks for, through the shared cache."""
    query = parse_search(search)
    shell, controls = ShellState.from_query(query), Controls.from_query(query)
    site = reads.resolve_site(shell.site)
    if site is None:
        return View(shell, controls, None, None)
    seconds = reads.history_seconds()
    shown = shown_period(query)  # a bad zone or range is said first
    known = tuple(reads.shared(queries.list_sites, seconds=seconds))
    if site not in known:
        return View(shell, controls, site, None, known_sites=known)
    chart = breakdown_view.chart_reader(query, site, shown, shell.pages, shell.tz,
                                        seconds)  # a filter, or humans only
    shown = chart.period
    read = chart.read or (lambda p: _series(site, p, shell, seconds))
    current = read(shown)
    previous = read(comparison_period(query, shown, shell.tz)) if controls.compare else None
    return View(shell, controls, site, shown, current, previous,
                incomplete=ends_inside_a_bucket(shown, shell.tz), known_sites=known,
                source=chart.source, humans=chart.humans)


def ends_inside_a_bucket(shown: Period, tz: str) -> bool:
    """True when the period stops before its last bucket ends (today so far, the
    current hour): that bucket is still filling up."""
    edges = bucket_edges(shown.start, shown.end, shown.granularity, validation.timezone(tz))
    return edges[-1] > shown.end


def _series(site: str, shown: Period, shell: ShellState, seconds: int) -> pd.DataFrame:
    return reads.shared(queries.series, site, shown.start, shown.end, shown.granularity,
                        pages=shell.pages, tz=shell.tz, seconds=seconds)


