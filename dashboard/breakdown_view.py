"""What the History page's panels, KPIs and filter show, from the URL alone (no Dash).

Humans by default: without ``bots=1`` every panel, the 404 list, the KPIs and the chart
leave bots out; the bot share is shown beside the toggle. Without a filter the panels
read the pre-aggregated counters (any range, a few documents), which count bots apart
(``humans = all - bots`` per value). A filter of one dimension
(``filter=referrer:news.example``) draws the chart from the counters too
(``filtered_series``), for any range; the other panels then combine two dimensions and
come from raw events, limited to their retention, and the page says so. Counters written
before bots were counted apart cannot leave their bots out: the page says how many.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

import queries
from queries import validation
from queries.dimensions import reads as dim_reads
from queries.dimensions.assets import kind
from queries.dimensions.encoding import MAX_VALUE
from queries.dimensions.pages import PAGES_READ, ranked_pages
from queries.events.filtered import PAGE, filtered_breakdowns

from . import reads
from .ranges import Period, comparable
from .state import ASSETS_KEY, BOTS_KEY, filter_pair, first

PANELS = {PAGE: "Pages", "referrer": "Referrers", "status": "Status codes",
          "browser": "Browsers", "os": "Operating systems", "device": "Devices",
          "country": "Countries", "utm_source": "UTM source", "utm_medium": "UTM medium",
          "utm_campaign": "UTM campaign"}
DIMENSION_PANELS = tuple(d for d in PANELS if d != PAGE)
TOP_N = 10
BOT = "bot"
HUMANS = ("bot", "human")


@dataclass(frozen=True)
class Options:
    """The panels' part of the URL: one filter, bots included, assets included."""

    filter: tuple[str, str] | None
    bots: bool
    assets: bool

    @classmethod
    def from_query(cls, query) -> Options:
        """Raises ``InvalidRangeError`` (a message, not a traceback) for a bad filter."""
        pair = filter_pair(query)
        if pair is not None:
            by, value = pair
            dim_reads.dimension(by)
            if not value or len(value) > MAX_VALUE:
                raise validation.InvalidRangeError(
                    f"a filter is dimension:value, with a value of 1 to {MAX_VALUE} characters")
        return cls(pair, first(query, BOTS_KEY) == "1", first(query, ASSETS_KEY) == "1")


def series_source(options: Options, pages: tuple[str, ...]) -> tuple[str, str] | None:
    """The (dimension, value) whose counted hits the chart shows instead of hits per
    page: the filter, else humans for the whole site (pages are not split by bot)."""
    if options.filter:
        return options.filter
    if not options.bots and not pages:
        return HUMANS
    return None


def series_label(source: tuple[str, str]) -> str:
    return "Humans" if source == HUMANS else f"{source[0]} = {source[1]}"


def humans_only(options: Options) -> bool:
    """Whether bots are left out: unless asked for, or filtered by the bot dimension."""
    return not options.bots and not (options.filter and options.filter[0] == "bot")


def filtered_reader(site: str, source: tuple[str, str], tz: str, seconds: int,
                    humans: bool = False) -> Callable[[Period], pd.DataFrame]:
    """A reader of ``source``'s hits per bucket of a period, one column."""
    by, value = source

    def read(shown: Period) -> pd.DataFrame:
        frame = reads.shared(dim_reads.filtered_series, site, by, value, shown.start,
                             shown.end, shown.granularity, tz=tz, humans=humans,
                             seconds=seconds)
        return frame.rename(columns={"hits": series_label(source)})
    return read


@dataclass(frozen=True)
class ChartSource:
    """What the chart draws: hits per page (``source`` None), or the hits of one
    dimension's value (humans only if ``humans``), read by ``read`` per period."""

    period: Period
    read: Callable[[Period], pd.DataFrame] | None = None
    source: tuple[str, str] | None = None
    humans: bool = False


def chart_reader(query, site: str, shown: Period, pages: tuple[str, ...], tz: str,
                 seconds: int) -> ChartSource:
    """The period the chart shows and what it reads: a filter, humans, or hits per page
    as usual. A bad filter raises a message."""
    options = Options.from_query(query)
    source = series_source(options, pages)
    if source == HUMANS and (shown.granularity == "minute"
                             or not counted(site, shown, tz, seconds)):
        return ChartSource(shown)  # bots are told apart per hour at the finest: every hit
    if source is None:
        return ChartSource(shown)
    humans = humans_only(options)
    return ChartSource(coarse(shown), filtered_reader(site, source, tz, seconds, humans),
                       source, humans)


def counted(site: str, shown: Period, tz: str, seconds: int) -> bool:
    """Whether the range has dimension counters (hits stored before they existed have
    none: those views show every hit, as before)."""
    bots = _cached(dim_reads.breakdown, site, "bot", shown.start, shown.end, tz=tz,
                   seconds=seconds)
    return bool(len(bots)) and int(bots["hits"].sum()) > 0


def coarse(shown: Period) -> Period:
    """Counters come per hour at the finest: a minute view of a filter is drawn per hour."""
    return dataclasses.replace(shown, granularity="hour") if shown.granularity == "minute" \
        else shown


@dataclass(frozen=True)
class Figures:
    """The KPIs of one period: hits, visitors, views per visitor, 4xx/5xx rate."""

    hits: int
    visitors: int | None
    errors: float | None  # share of 4xx and 5xx among the hits counted with a status
    errors_from_events: bool = False  # the filter's rate, counted from raw events

    @property
    def per_visitor(self) -> float | None:
        """Hits per distinct visitor of the period (not per visit: visits are not kept)."""
        return self.hits / self.visitors if self.visitors else None


@dataclass(frozen=True)
class Panels:
    """Everything beside the chart: one frame per panel, the 404 list, the KPIs now and
    before, the bot share and what the reader should know about where numbers come from."""

    frames: dict[str, pd.DataFrame]
    not_found: pd.DataFrame
    current: Figures
    compared: Figures | None    # the current period's whole hours (``ranges.comparable``)
    previous: Figures | None    # the same hours of the previous period
    bot_share: float
    notes: tuple[str, ...]
    # Whether the visitors of ``compared`` and ``previous`` are theirs: a filtered
    # value's come from sketches kept per UTC day, so only whole UTC days compare.
    visitors_comparable: bool = True
    empty: str | None = None    # what empty panels say, when not "no hits"


def _cached(fn, *args, seconds, **kwargs):
    return reads.shared(fn, *args, seconds=seconds, **kwargs)


def _pages(site: str, shown: Period, tz: str, options: Options, seconds: int
           ) -> tuple[pd.DataFrame, str | None]:
    """Pages by hits with their visitors, as ``ranked_pages`` ranks them, and its note."""
    ranked = _cached(ranked_pages, site, shown.start, shown.end, tz=tz, n=TOP_N,
                     humans=humans_only(options), assets=options.assets, seconds=seconds)
    return ranked.reset_index().rename(columns={PAGE: "value"}), ranked.attrs["note"] or None


def _error_rate(status: pd.DataFrame) -> float | None:
    coded = status[status["value"].str.fullmatch(r"\d{3}")]
    total = int(coded["hits"].sum())
    bad = int(coded.loc[coded["value"].str[0].isin(["4", "5"]), "hits"].sum())
    return bad / total if total else None


def _figures(site: str, shown: Period, tz: str, options: Options, seconds: int
             ) -> tuple[Figures, pd.DataFrame, pd.DataFrame]:
    """The KPIs from the counters (any range), with the bot breakdown (everyone) and
    the status one (humans unless bots are included). Under a filter they are the
    filtered hits' (the 4xx/5xx rate: see ``_filtered_errors``)."""
    humans = humans_only(options)
    bots = _cached(dim_reads.breakdown, site, "bot", shown.start, shown.end, tz=tz,
                   seconds=seconds)
    status = _cached(dim_reads.breakdown, site, "status", shown.start, shown.end, tz=tz,
                     humans=humans, seconds=seconds)
    source = options.filter or (None if options.bots else HUMANS)
    if not options.filter and not int(bots["hits"].sum()):
        # Hits stored before dimensions were counted: the pages' counts, every hit.
        whole = _cached(queries.series, site, shown.start, shown.end,
                        coarse(shown).granularity, tz=tz, seconds=seconds)
        return Figures(int(whole.to_numpy().sum()), None, None), bots, status
    if source in (None, HUMANS):     # the whole site's sketches: to the hour
        hits = int(bots["hits"].sum() if source is None
                   else bots.loc[bots["value"] == HUMANS[1], "hits"].sum())
        people = _cached(dim_reads.visitors, site, shown.start, shown.end, tz=tz,
                         humans=source == HUMANS, seconds=seconds)
    else:
        frame = bots if source[0] == "bot" else _cached(
            dim_reads.breakdown, site, source[0], shown.start, shown.end, tz=tz,
            humans=humans, seconds=seconds)
        row = frame[frame["value"] == source[1]]
        hits = int(row["hits"].sum())
        people = int(row["visitors"].iloc[0]) if len(row) and pd.notna(
            row["visitors"].iloc[0]) else (0 if not len(row) else None)
    if options.filter:
        errors, from_events = _filtered_errors(site, shown, tz, options, hits, seconds)
        return Figures(hits, people, errors, from_events), bots, status
    return Figures(hits, people, _error_rate(status)), bots, status


def _filtered_errors(site: str, shown: Period, tz: str, options: Options, hits: int,
                     seconds: int) -> tuple[float | None, bool]:
    """The 4xx/5xx rate of the filtered hits, and whether it comes from raw events. A
    status filter is its own rate; the bot dimension is counted apart in the counters
    (``b``); any other value's statuses are not (two dimensions), so they come from the
    raw events the panels read, within their retention."""
    by, value = options.filter
    if not hits:
        return None, False
    if by == "status":
        return (float(value[0] in "45"), False) if value.isdigit() and len(value) == 3 \
            else (None, False)
    if by == "bot":
        status = _cached(dim_reads.breakdown, site, "status", shown.start, shown.end,
                         tz=tz, humans=value != BOT, bots=value == BOT, seconds=seconds)
        return _error_rate(status), False
    found = _events_panels(site, shown, options, seconds)
    return (_error_rate(found.panels["status"]) if found.hits else None), True


def _events_panels(site: str, shown: Period, options: Options, seconds: int):
    """The filtered hits' panels from raw events (one grouped read, shared)."""
    by, value = options.filter
    return _cached(filtered_breakdowns, site, by, value, shown.start, shown.end,
                   (*DIMENSION_PANELS, "notfound"), humans_only=humans_only(options),
                   n=PAGES_READ, seconds=seconds)


def _bot_share(site: str, shown: Period, tz: str, options: Options, bots: pd.DataFrame,
               seconds: int) -> float:
    """Bots' share of the view's hits: the filtered ones' under a filter (the counters
    count bots apart by every value), else the whole site's."""
    if options.filter:
        by, value = options.filter
        return _cached(dim_reads.value_bot_share, site, by, value, shown.start, shown.end,
                       tz=tz, seconds=seconds)
    total = int(bots["hits"].sum())
    return int(bots.loc[bots["value"] == BOT, "hits"].sum()) / total if total else 0.0


def compute_panels(site: str, shown: Period, previous: Period, tz: str, options: Options,
                   pages: tuple[str, ...], seconds: int) -> Panels:
    """Every panel and KPI of the view, read through the shared cache."""
    current, bots, status = _figures(site, shown, tz, options, seconds)
    compared = before = None
    cut = comparable(shown, previous, tz)
    if cut is not None:
        compared = current if cut[0] == shown else _figures(site, cut[0], tz, options,
                                                            seconds)[0]
        before = _figures(site, cut[1], tz, options, seconds)[0]
    humans = humans_only(options)
    share = _bot_share(site, shown, tz, options, bots, seconds)
    notes, empty = [], None
    if humans and status.attrs.get("unsplit"):
        notes.append(f"{status.attrs['unsplit']:,} bot hits in this range were stored "
                     "before bots were counted apart: the panels, KPIs and a filtered "
                     "chart count them as humans.")
    if options.filter:
        by, value = options.filter
        found = _events_panels(site, shown, options, seconds)
        frames = {d: found.panels[d].head(TOP_N) for d in DIMENSION_PANELS}
        page_frame = found.panels[PAGE]
        if not options.assets:
            page_frame = page_frame[[kind(v) != "asset" for v in page_frame["value"]]]
        frames[PAGE] = page_frame.head(TOP_N).reset_index(drop=True)
        rate = "the panels and the 4xx/5xx rate" if current.errors_from_events \
            else "the panels"
        notes.append(f"{rate.capitalize()}: {found.note}.")
        if current.errors_from_events and current.errors is None and current.hits:
            notes.append(f"The 4xx/5xx rate cannot follow {by} = {value} in this range: "
                         "no raw events of these hits are kept (the counters count "
                         "status codes and referrers, browsers... each on its own).")
        if shown.granularity == "minute":
            notes.append("A filtered chart comes per hour at the finest (the counters' "
                         "finest step).")
        not_found = found.panels["notfound"].head(TOP_N).rename(
            columns={"value": "path"})[["path", "hits"]]
        if found.hits < current.hits:      # the panels see only what raw events keep
            empty = (f"None among the {found.hits:,} of these hits whose raw events are "
                     "kept." if found.hits else "No raw events are kept of these hits.")
    else:
        frames = {}
        frames[PAGE], pages_note = _pages(site, shown, tz, options, seconds)
        for dim in DIMENSION_PANELS:
            frames[dim] = status.head(TOP_N) if dim == "status" else _cached(
                dim_reads.breakdown, site, dim, shown.start, shown.end, tz=tz, n=TOP_N,
                humans=humans, seconds=seconds)
        not_found = _cached(dim_reads.top_not_found, site, shown.start, shown.end, tz=tz,
                            humans=humans, seconds=seconds)
        if humans and shown.granularity == "minute" and not pages:
            notes.append("Per minute, the chart and totals count every hit, bots "
                         "included (bots are told apart per hour); panels and KPIs count "
                         "humans.")
        if pages_note:
            notes.append(pages_note)
    if pages and options.filter:
        notes.append("With a filter the chart shows the whole site: pages are not "
                     "counted by dimension.")
    elif pages:
        notes.append("Panels and KPIs are for the whole site; the chart shows the "
                     "selected pages, bots included.")
    comparable_visitors = not options.filter or (cut is not None and all(
        _whole_utc_days(p) for p in cut))
    return Panels(frames, not_found, current, compared, before, share, tuple(notes),
                  comparable_visitors, empty)


def _whole_utc_days(period: Period) -> bool:
    return all(t == t.replace(hour=0, minute=0, second=0, microsecond=0)
               for t in (period.start.astimezone(dt.UTC), period.end.astimezone(dt.UTC)))
