"""What the History page's panels, KPIs and filter show, for the view's query value
(no Dash).

One population per screen: without ``bots=1`` the chart, its totals, the KPIs and every
panel count people (bots left out); the bots' share is shown beside the toggle. The KPIs
are those of the chart's own range and read (its total is their hits), against the
period the page compares with. A page, a referrer, any value clicked is a condition on
the hits (``queries.reads.query``): without one the panels read the pre-aggregated
counters; with one they come from the raw events of the hits meeting every condition,
limited to their retention, and so do the KPIs' visitors and 4xx/5xx rate when the
counters cannot answer them (a page; a page and a referrer): the page says so. Visits,
their entry and exit pages and goals are the whole site's: their cards and panels say
so under a condition. Every figure counts exactly the range shown; where the stored
data cannot (raw events of the hours an edge cuts are gone), the page says what it
counted instead.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pandas as pd

from dashboard import reads
from queries.reads.filtered import Filtered
from queries.reads.history import (
    HITS,
    Figures,
    Totals,
    figures_of,
    goal_figures,
    imported_days,
    visit_figures,
    visit_pages,
)
from queries.reads.panels import (
    Breakdowns,
    bot_share_of,
    breakdowns_of,
    matched_breakdowns,
    matched_panels,
)
from queries.reads.query import (
    CHART,
    COUNTERS,
    EVENTS,
    KPIS,
    PAGE,
    VISIT_KPIS,
    VISITS,
    Query,
)

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
    numbers come from; ``query``: the view they describe."""

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
    query: Query | None = None


def _cached(fn, *args, **kwargs):
    return reads.shared(fn, *args, seconds=reads.history_seconds(), **kwargs)


def compute_panels(q: Query) -> Panels:
    """Every panel and KPI of the view, read through the shared cache. The KPIs' hits
    are the total of the view's chart of hits (the whole site's, its pages' or its
    filter's), as History draws it."""
    key = replace(q, metric=HITS, compared=None)       # what the panels depend on
    matched = (_cached(matched_panels, q.site, q.start, q.end, DIMENSION_PANELS,
                       q.conditions, q.humans) if q.conditions else None)
    found = (matched_breakdowns(matched, DIMENSION_PANELS, q.assets, TOP_N, q.pages)
             if matched is not None else _cached(breakdowns_of, key, DIMENSION_PANELS, TOP_N))
    current = _kpis(replace(key, assets=False), matched)
    before = q.before()
    previous = None if before is None else _kpis(replace(before, metric=HITS, assets=False))
    notes = list(found.notes)
    empty = None
    if q.conditions:
        notes += _condition_notes(found, q, current)
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
    share = _cached(bot_share_of, replace(key, humans=True, assets=False))
    by = {"tz": q.tz, "granularity": q.granularity}      # imported days: per day or longer
    visits = _cached(visit_figures, q.site, q.start, q.end, now=q.now, **by)
    visits_before = None if before is None else _cached(
        visit_figures, q.site, before.start, before.end, now=q.now, **by)
    days = _cached(imported_days, q.site, q.start, q.end, **by)
    if days:
        notes.append(f"Visitors, visits, pageviews, bounce rate and duration include {days:,} "
                     f"imported day{'s' * (days != 1)} (hitboard import; never in hours)"
                     + ("; visitors sum daily visitors there, approximate."
                        if current.visitors_imported else "."))
    cut = [name for name, found in (("the range", visits), ("the compared period",
                                                           visits_before))
           if found is not None and not found.exact]
    if cut:
        notes.append(f"Visits: {' and '.join(cut)} cut{'s' if len(cut) == 1 else ''} a "
                     "quarter hour, whose visits count whole (visits are kept per quarter "
                     "hour of their first pageview).")
    pages = _cached(visit_pages, q.site, q.start, q.end, TOP_N)
    goals = _cached(goal_figures, q.site, q.start, q.end, now=q.now)
    return Panels(frames, found.not_found, current, previous, share, tuple(notes), visits,
                  visits_before, pages, goals, empty, q)


def _kpis(q: Query, matched: Filtered | None = None) -> Figures:
    """The KPIs of a view (``matched``: the raw events' read of its conditions, which the
    panels made, when they count from it)."""
    hits = read_chart(q).total
    if matched is not None:
        return reads.derived(figures_of, q, hits, given={"matched": matched},
                             seconds=reads.history_seconds())
    return _cached(figures_of, q, hits)


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


def _condition_notes(found: Breakdowns, q: Query, current: Figures) -> list[str]:
    """What the reader of a view with conditions should know: which of its parts come
    from raw events (the panels; the KPIs' visitors and 4xx/5xx rate when the counters
    cannot answer them; the chart of a combination), that a filtered chart is hourly at
    the finest, and which parts count the whole site's visits instead."""
    parts = ["the panels"]
    if q.reads(KPIS).source == EVENTS:
        parts.append("the visitors")
    if current.errors_from_events:
        parts.append("the 4xx/5xx rate")
    if q.reads(CHART).source == EVENTS:
        parts.append("the chart")
    said = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]
    notes = [f"{said[0].upper()}{said[1:]}: {found.source}."]
    filter = q.filter
    if (current.errors_from_events and current.errors is None and current.hits
            and filter is not None):
        by, value = filter
        notes.append(f"The 4xx/5xx rate cannot follow {by} = {value} in this range: no "
                     "raw events of these hits are kept (the counters count status codes "
                     "and referrers, browsers... each on its own).")
    if q.granularity == "minute" and q.reads(CHART).source in (COUNTERS, EVENTS):
        notes.append("A filtered chart comes per hour at the finest (the counters' finest "
                     "step).")
    if not q.follows(VISIT_KPIS):
        chart = "" if q.follows(CHART) else ", the chart of visits"
        notes.append(f"Visits, entry and exit pages, goals{chart}: all of the site's "
                     f"visits ({q.label} does not apply to {VISITS}).")
    return notes
