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

import queries
from dashboard import reads
from dashboard.ranges import Period
from queries.dimensions import reads as dim_reads
from queries.dimensions.assets import kind
from queries.dimensions.pages import PAGES_READ, ranked_pages
from queries.dimensions.spans import approximate_note
from queries.reads.filtered import PAGE, filtered_breakdowns
from queries.reads.history import Figures, figures

from .url import Options
from .view import read_chart

PANELS = {PAGE: "Pages", "referrer": "Referrers", "status": "Status codes",
          "browser": "Browsers", "os": "Operating systems", "device": "Devices",
          "country": "Countries", "utm_source": "UTM source", "utm_medium": "UTM medium",
          "utm_campaign": "UTM campaign"}
DIMENSION_PANELS = tuple(d for d in PANELS if d != PAGE)
TOP_N = 10
BOT = "bot"


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
    notes, empty = [], None
    if options.filter:
        frames, not_found, empty = _filtered(site, shown, options, current, notes, seconds)
    else:
        frames, not_found = _counted(site, shown, tz, options, notes, now, seconds)
    if current.visitors is not None:
        frames = {dim: _at_most(frame, current.visitors) for dim, frame in frames.items()}
    if not (current.visitors_exact and (previous is None or previous.visitors_exact)):
        notes.append("Visitors per value come from the sketches of whole UTC days here "
                     "(the raw events of the range's other hours are no longer kept), "
                     "each at most its hits: their change is not shown.")
    return Panels(frames, not_found, current, previous,
                  _bot_share(site, shown, options, now, seconds), tuple(notes), empty)


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


def _counted(site: str, shown: Period, tz: str, options: Options, notes: list[str], now,
             seconds: int) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """The panels from the counters (any range), people's unless bots are included."""
    frames = {}
    ranked = _cached(ranked_pages, site, shown.start, shown.end, n=TOP_N,
                     humans=options.humans, assets=options.assets, now=now, seconds=seconds)
    frames[PAGE] = ranked.reset_index().rename(columns={PAGE: "value"})
    if ranked.attrs["note"]:
        notes.append(ranked.attrs["note"])
    for dim in DIMENSION_PANELS:
        frames[dim] = _cached(dim_reads.breakdown, site, dim, shown.start, shown.end,
                              n=TOP_N, humans=options.humans, now=now, seconds=seconds)
    not_found = _cached(dim_reads.top_not_found, site, shown.start, shown.end,
                        humans=options.humans, now=now, seconds=seconds)
    status = frames["status"]
    if options.humans and status.attrs.get("unsplit"):
        notes.append(f"{status.attrs['unsplit']:,} bot hits in this range were stored "
                     "before bots were counted apart: the panels and KPIs count them as "
                     "humans.")
    if not status.attrs.get("exact", True):
        notes.append(approximate_note(status.attrs["counted"], tz, "The panels") + ".")
    return frames, not_found


def _filtered(site: str, shown: Period, options: Options, current: Figures,
              notes: list[str], seconds: int):
    """The filtered hits' panels, from raw events (one grouped read, shared)."""
    by, value = options.filter
    found = _cached(filtered_breakdowns, site, by, value, shown.start, shown.end,
                    (*DIMENSION_PANELS, "notfound"), humans_only=options.humans,
                    n=PAGES_READ, seconds=seconds)
    frames = {d: found.panels[d].head(TOP_N) for d in DIMENSION_PANELS}
    page_frame = found.panels[PAGE]
    if not options.assets:
        page_frame = page_frame[[kind(v) != "asset" for v in page_frame["value"]]]
    frames[PAGE] = page_frame.head(TOP_N).reset_index(drop=True)
    rate = "the panels and the 4xx/5xx rate" if current.errors_from_events else "the panels"
    notes.append(f"{rate.capitalize()}: {found.note}.")
    if current.errors_from_events and current.errors is None and current.hits:
        notes.append(f"The 4xx/5xx rate cannot follow {by} = {value} in this range: no "
                     "raw events of these hits are kept (the counters count status codes "
                     "and referrers, browsers... each on its own).")
    if shown.granularity == "minute":
        notes.append("A filtered chart comes per hour at the finest (the counters' finest "
                     "step).")
    not_found = found.panels["notfound"].head(TOP_N).rename(
        columns={"value": "path"})[["path", "hits"]]
    empty = None
    if found.hits < current.hits:      # the panels see only what raw events keep
        empty = (f"None among the {found.hits:,} of these hits whose raw events are kept."
                 if found.hits else "No raw events are kept of these hits.")
    return frames, not_found, empty


def _bot_share(site: str, shown: Period, options: Options, now, seconds: int) -> float:
    """Bots' share of the view's hits: the filtered ones' under a filter (the counters
    count bots apart by every value), else the whole site's."""
    if options.filter:
        by, value = options.filter
        return _cached(dim_reads.value_bot_share, site, by, value, shown.start, shown.end,
                       now=now, seconds=seconds)
    everyone = _cached(queries.series, site, shown.start, shown.end, "day", seconds=seconds)
    people = _cached(queries.series, site, shown.start, shown.end, "day", humans=True,
                     seconds=seconds)
    total = int(everyone.to_numpy().sum())
    return (total - int(people.to_numpy().sum())) / total if total else 0.0
