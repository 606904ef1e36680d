"""What a share page shows, built from its link's scope and the few view keys a reader
may change (range, granularity, zone, theme): never from a site, page or filter in the
URL. History's chart and KPIs come from History's own reads (``queries.reads``), Live's
from the live snapshot every viewer of the site shares (``dashboard.reads``)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import queries
from components import GRAPH_CONFIG, plotted_frame, timeseries_figure
from components.numbers import count
from dashboard import reads
from dashboard.ranges import ALL_TIME, DEFAULT_PRESET, GRANULARITIES, PRESETS, period
from dashboard.spreadsheet import frame_csv
from dashboard.state import THEMES
from queries import validation
from queries.reads.history import chart_of, counts_people, figures_of
from queries.reads.panels import breakdowns_of
from queries.reads.query import PAGE, Condition, Query
from queries.shares import Share
from queries.stats.series import bucket_edges
from queries.stats.sites import site_settings

LIVE_MINUTES = 60
# History's panels a share page shows, with their titles; at most ``PANEL_ROWS`` each.
PANELS = {PAGE: "Pages", "referrer": "Referrers", "country": "Countries"}
PANEL_ROWS = 10
TRANSPARENT = "rgba(0,0,0,0)"


@dataclass(frozen=True)
class Params:
    """The reader's part of a share URL, each key checked against its few values; every
    other key (``site``, ``filter``, ``page``...) is dropped unread."""

    range: str = DEFAULT_PRESET
    start: str | None = None
    end: str | None = None
    gran: str = "auto"
    tz: str | None = None
    theme: str = THEMES[0]
    embed: bool = False
    transparent: bool = False

    @classmethod
    def from_args(cls, args) -> Params:
        def pick(key, allowed, default):
            value = args.get(key)
            return value if value in allowed else default

        return cls(range=pick("range", PRESETS, DEFAULT_PRESET),
                   start=_short(args.get("start")), end=_short(args.get("end")),
                   gran=pick("gran", GRANULARITIES, "auto"), tz=_short(args.get("tz")),
                   theme=pick("theme", THEMES, THEMES[0]),
                   embed=args.get("embed") == "true",
                   transparent=args.get("background") == "transparent")

    def query(self) -> dict[str, str]:
        """The keys as a URL keeps them (what the page's links and requests carry)."""
        kept = {"range": self.range, "start": self.start, "end": self.end,
                "gran": self.gran, "tz": self.tz, "theme": self.theme,
                "embed": "true" if self.embed else None,
                "background": "transparent" if self.transparent else None}
        return {k: v for k, v in kept.items() if v and not (k == "gran" and v == "auto")}


def _short(value: str | None) -> str | None:
    return value[:64] if value else None


def zone_of(db, share: Share, params: Params) -> str:
    """The reader's zone, else the site's own (``tz`` in the registry), else UTC."""
    if params.tz:
        return validation.timezone(params.tz).key
    return site_settings(db, share.site).tz or "UTC"


def history_query(db, share: Share, params: Params) -> Query:
    """History's query value for the link: its site and filter, the reader's range."""
    tz = zone_of(db, share, params)
    seconds = reads.history_seconds()
    now = reads.now(seconds)
    span = reads.shared(queries.site_span, share.site, seconds=seconds) \
        if params.range == ALL_TIME else None
    shown = period(params.range, params.gran, now, tz, params.start, params.end, span)
    conditions = () if share.filter is None else (Condition(*_condition(share.filter)),)
    return Query(share.site, shown.start, shown.end, shown.granularity, tz, conditions,
                 counts_people(share.filter, False), now=now)


def _condition(pair: tuple[str, str]) -> tuple[str, tuple[str, ...]]:
    by, value = pair
    return by, (value,)


def history(db, share: Share, params: Params) -> dict:
    """The chart (a Plotly figure as JSON data), the KPIs and the period, in words."""
    q = history_query(db, share, params)
    chart = reads.shared(chart_of, q, seconds=reads.history_seconds())
    zone = validation.timezone(q.tz)
    # The last bucket still filling up (today, this hour) is shaded, as on History.
    incomplete = bucket_edges(q.start, q.end, chart.granularity, zone)[-1] > q.end
    figure = timeseries_figure(chart.frame, granularity=chart.granularity,
                               theme=params.theme, pages=q.pages, incomplete=incomplete,
                               uirevision=f"share|{share.prefix}")
    _background(figure, params)
    found = reads.shared(figures_of, q, chart.total, seconds=reads.history_seconds())
    last = q.end - dt.timedelta(microseconds=1)
    return {"figure": figure.to_plotly_json(), "config": GRAPH_CONFIG,
            "period": f"{q.start.astimezone(zone):%a %d %b %Y} → "
                      f"{last.astimezone(zone):%a %d %b %Y} · per {chart.granularity} · "
                      f"{q.tz}",
            "kpis": [{"label": "Hits" if chart.humans is False else "Hits (people)",
                      "value": count(chart.total)},
                     {"label": "Visitors", "value": count(found.visitors)}],
            "panels": panels(db, q)}


def panels(db, q: Query) -> dict:
    """The top pages, referrers and countries of the view, as History's panels read
    them (the counters, or raw events under the link's filter), with their notes."""
    found = reads.shared(breakdowns_of, q, tuple(d for d in PANELS if d != PAGE),
                         PANEL_ROWS, seconds=reads.history_seconds())
    tables = [{"title": title, "rows": _rows(found.frames.get(dim))}
              for dim, title in PANELS.items()]
    notes = [*found.notes, *([found.source] if found.source else [])]
    return {"tables": tables, "notes": notes}


def history_csv(db, share: Share, params: Params) -> tuple[str, str]:
    """The CSV of what the chart draws, and its file name."""
    q = history_query(db, share, params)
    chart = reads.shared(chart_of, q, seconds=reads.history_seconds())
    zone = validation.timezone(q.tz)
    name = f"hitboard-{share.site}-{chart.granularity}-{q.start.astimezone(zone):%Y%m%d}.csv"
    return frame_csv(plotted_frame(chart.frame)), name


def _rows(frame) -> list[list[str]]:
    """A panel's ``value`` and ``hits`` as the page writes them (none: an empty read)."""
    if frame is None or not {"value", "hits"} <= set(frame.columns):
        return []
    return [[str(value), count(hits)] for value, hits in
            frame[["value", "hits"]].head(PANEL_ROWS).itertuples(index=False)]


def live_pages(share: Share) -> tuple[str, ...] | None:
    """The pages Live may show under the link's filter: every page without one, the
    filter's page for a ``page:`` filter; None when Live cannot honour the filter (the
    live counts are per page only)."""
    if share.filter is None:
        return ()
    by, value = share.filter
    return (value,) if by == PAGE else None


def live(db, share: Share, params: Params) -> dict | None:
    """The last hour per minute and the live totals; None when the filter rules it out."""
    pages = live_pages(share)
    if pages is None:
        return None
    tz = zone_of(db, share, params)
    snapshot = reads.live_snapshot(share.site, pages, tz, LIVE_MINUTES)
    figure = timeseries_figure(snapshot.series, granularity="minute", theme=params.theme,
                               pages=pages, incomplete=True, running=True,
                               uirevision=f"share-live|{share.prefix}")
    _background(figure, params)
    totals = snapshot.totals
    return {"figure": figure.to_plotly_json(), "config": GRAPH_CONFIG,
            "kpis": [{"label": "Hits this minute", "value": count(totals.this_minute)},
                     {"label": "Hits, last hour", "value": count(totals.last_hour)},
                     {"label": "Hits today", "value": count(totals.today)}],
            "as_of": snapshot.as_of.isoformat()}


def _background(figure, params: Params) -> None:
    if params.transparent:
        figure.update_layout(paper_bgcolor=TRANSPARENT, plot_bgcolor=TRANSPARENT)
