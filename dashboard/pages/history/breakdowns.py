"""What the History page's panels, KPIs and filter show, from the URL alone (no Dash).

One population per screen: without ``bots=1`` the chart, its totals, the KPIs and every
panel count people (bots left out); the bots' share is shown beside the toggle. The KPIs
are those of the chart's own range and read (its total is their hits), against the
period the page compares with. Without a filter the panels read the pre-aggregated
counters; a filter of one dimension (``filter=referrer:news.example``) draws the chart
from the counters too, and the other panels, which combine two dimensions, come from raw
events, limited to their retention: the page says so. Every figure counts exactly the
range shown; where the stored data cannot (raw events of the hours an edge cuts are
gone), the page says what it counted instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from dashboard import reads
from dashboard.ranges import Period
from queries.reads.filtered import PAGE
from queries.reads.history import (
    Figures,
    Totals,
    figures,
    goal_figures,
    visit_figures,
    visit_pages,
)
from queries.reads.panels import Breakdowns, bot_share, breakdowns

from .url import Options
from .view import read_chart

VISIT_PANELS = {"entry": "Entry pages", "exit": "Exit pages"}
PANELS = {PAGE: "Pages", "referrer": "Referrers", "status": "Status codes",
          "browser": "Browsers", "os": "Operating systems", "device": "Devices",
          "country": "Countries", "utm_source": "UTM source", "utm_medium": "UTM medium",
          "utm_campaign": "UTM campaign"}
DIMENSION_PANELS = tuple(d for d in PANELS if d != PAGE)
TOP_N = 10


@dataclass(frozen=True)
class Panels:
    """Everything beside the chart: one frame per panel, the 404 list, the KPIs now and
    in the compared period, the bot share and what the reader should know about where
    numbers come from."""

    frames: dict[str, pd.DataFrame]
    not_found: pd.DataFrame
    current: Figures
    previous: Figures | None
    bot_share: float
    notes: tuple[str, ...]
    visits: Totals
    visits_before: Totals | None
    visit_pages: dict[str, pd.DataFrame]     # entry and exit pages
    goals: pd.DataFrame                      # the site's goals (custom.reads.COLUMNS)
    empty: str | None = None    # what empty panels say, when not "no hits"


def _cached(fn, *args, seconds, **kwargs):
    return reads.shared(fn, *args, seconds=seconds, **kwargs)


def compute_panels(site: str, shown: Period, compared: Period | None, tz: str,
                   options: Options, seconds: int) -> Panels:
    """Every panel and KPI of the view, read through the shared cache. The KPIs' hits
    are the total of the whole site's chart (or the filter's), as History draws it."""
    now = reads.now(seconds)

    def kpis(period: Period) -> Figures:
        hits = read_chart(site, period, tz, (), options, seconds).total
        return _cached(figures, site, period.start, period.end, hits, options.filter,
                       options.humans, now=now, seconds=seconds)

    current = kpis(shown)
    previous = None if compared is None else kpis(compared)
    found = _cached(breakdowns, site, shown.start, shown.end, tz, DIMENSION_PANELS,
                    options.filter, options.humans, options.assets, TOP_N,
                    now=now, seconds=seconds)
    notes = list(found.notes)
    empty = None
    if options.filter:
        notes += _filter_notes(found, shown, options, current)
        if found.events_hits < current.hits:      # the panels see what raw events keep
            empty = (f"None among the {found.events_hits:,} of these hits whose raw events "
                     "are kept." if found.events_hits else "No raw events are kept of these "
                     "hits.")
    frames = found.frames
    if current.visitors is not None:
        frames = {dim: _at_most(frame, current.visitors) for dim, frame in frames.items()}
    if not (current.visitors_exact and (previous is None or previous.visitors_exact)):
        notes.append("Visitors per value come from the sketches of whole UTC days here "
                     "(the raw events of the range's other hours are no longer kept), "
                     "each at most its hits: their change is not shown.")
    share = _cached(bot_share, site, shown.start, shown.end, options.filter, now=now,
                    seconds=seconds)
    visits = _cached(visit_figures, site, shown.start, shown.end, now=now, seconds=seconds)
    before = None if compared is None else _cached(
        visit_figures, site, compared.start, compared.end, now=now, seconds=seconds)
    cut = [name for name, found in (("the range", visits), ("the compared period", before))
           if found is not None and not found.exact]
    if cut:
        notes.append(f"Visits: {' and '.join(cut)} cut{'s' if len(cut) == 1 else ''} a "
                     "quarter hour, whose visits count whole (visits are kept per quarter "
                     "hour of their first pageview).")
    pages = _cached(visit_pages, site, shown.start, shown.end, TOP_N, seconds=seconds)
    goals = _cached(goal_figures, site, shown.start, shown.end, now=now, seconds=seconds)
    return Panels(frames, found.not_found, current, previous, share, tuple(notes), visits,
                  before, pages, goals, empty)


def _at_most(frame: pd.DataFrame, visitors: int) -> pd.DataFrame:
    """A panel whose values have at most the view's visitors: the two come from
    sketches of different sizes, about 1-2% apart, and a value's people are among the
    view's."""
    if "visitors" not in frame or not len(frame):
        return frame
    capped = frame.copy()
    capped["visitors"] = capped["visitors"].clip(upper=visitors)
    capped.attrs.update(frame.attrs)
    return capped


def _filter_notes(found: Breakdowns, shown: Period, options: Options,
                  current: Figures) -> list[str]:
    """What a filtered view's reader should know: the panels (and the 4xx/5xx rate,
    when it follows the filter) come from raw events; a filtered chart is hourly at the
    finest."""
    by, value = options.filter
    rate = "the panels and the 4xx/5xx rate" if current.errors_from_events else "the panels"
    notes = [f"{rate.capitalize()}: {found.source}."]
    if current.errors_from_events and current.errors is None and current.hits:
        notes.append(f"The 4xx/5xx rate cannot follow {by} = {value} in this range: no "
                     "raw events of these hits are kept (the counters count status codes "
                     "and referrers, browsers... each on its own).")
    if shown.granularity == "minute":
        notes.append("A filtered chart comes per hour at the finest (the counters' finest "
                     "step).")
    return notes
