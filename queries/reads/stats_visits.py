"""The Stats API's figures the visits' documents hold per page and quarter hour: under
filters on one page dimension alone (any operator, ``and``/``or``/``not``), and custom
events per time bucket; over any range, exact but for a quarter hour a range cuts.

- ``event:page``: its ``pageviews`` (the ``views`` rows) and the custom ``events`` sent on
  it (the ``ev`` cells of that page). Visits are kept by their entry and exit pages, not
  by every page they view: ``visits`` and the rates under a page filter are refused.
- ``visit:entry_page``, ``visit:exit_page``: ``visits``, ``bounce_rate``,
  ``visit_duration`` of the visits entering (leaving) there (the ``entry``/``exit`` rows).

Pages past ``sessions.MAX_PAGES`` in one hour are kept as ``(other)``, as for
``breakdown --by entry_page``.
"""

from __future__ import annotations

import bisect

from ..custom import reads as custom_reads
from ..stats import schema
from ..visits import cells, store
from ..visits import reads as visit_reads
from .stats_events import meets
from .stats_query import (
    HIT_METRICS,
    RAW_METRICS,
    TIME,
    VISIT_PAGES,
    Filter,
    StatsQuery,
    dimensions_of,
    only_on,
)

PAGE = "event:page"
PAGE_METRICS = ("pageviews", "events")
VISIT_PAGE_METRICS = ("visits", "bounce_rate", "visit_duration")
KIND = {PAGE: "views", **VISIT_PAGES}


def filtered_on(filters: tuple[Filter, ...]) -> str | None:
    """The one page dimension every filter tests alone (None: another, or several)."""
    return next((name for name in KIND if only_on(filters, name)), None)


def filtered_offered(filters: tuple[Filter, ...], dimension: str | None) -> tuple[str, ...]:
    """The metrics a filtered query of ``dimension`` (None: totals) can ask for."""
    on = filtered_on(filters)
    if on in VISIT_PAGES:
        return VISIT_PAGE_METRICS if dimension is None or dimension.startswith(TIME) else ()
    if dimension is not None and not dimension.startswith(TIME):
        return RAW_METRICS
    if on == PAGE:
        return (*HIT_METRICS, *PAGE_METRICS)
    return RAW_METRICS


def from_visits(q: StatsQuery) -> bool:
    """Whether ``q``'s filters are read from the visits' documents (one page dimension
    alone, no dimension but time)."""
    return (filtered_on(q.filters) is not None and not q.dimensions
            and (q.dimension is None or q.granularity is not None))


def filtered_refusal(metric: str, filters: tuple[Filter, ...],
                     dimension: str | None) -> str:
    """Why ``metric`` is not answered under ``filters``, in Plausible's words first."""
    on = filtered_on(filters)
    if metric == "views_per_visit" and on == PAGE:
        return "Metric `views_per_visit` cannot be queried with a filter on `event:page`"
    if dimension is not None and not dimension.startswith(TIME):
        return (f"Metric `{metric}` cannot be queried with filters and dimension "
                f"{dimension}: hitboard counts those from raw events, which give "
                f"{', '.join(RAW_METRICS)}")
    named = on or ", ".join(sorted({d for f in filters for d in dimensions_of(f)}))
    why = {PAGE: "visits are kept by their entry and exit pages, not by every page "
                 "they view: filter on visit:entry_page or visit:exit_page",
           None: "under filters on other dimensions than one page dimension hitboard "
                 f"counts {', '.join(RAW_METRICS)} (from raw events)"}.get(
        on, f"hitboard keeps {', '.join(VISIT_PAGE_METRICS)} by entry and exit page")
    return f"Metric `{metric}` cannot be queried with a filter on `{named}`: {why}"


def answer_filtered(db, q: StatsQuery, buckets: list) -> tuple[dict, bool]:
    """Per bucket label (None: the totals) the metrics of ``PAGE_METRICS`` or
    ``VISIT_PAGE_METRICS`` ``q`` asks for, and whether every figure is exact."""
    on = filtered_on(q.filters)
    kind = KIND[on]
    field = "page" if on == PAGE else VISIT_PAGES[on]

    def wanted(page: str) -> bool:
        return all(meets(f, {field: page}) for f in q.filters)

    found: dict = {}
    if len(buckets) == 1:       # the totals: whole months and days from their sums
        rows = visit_reads.page_sums(db, q.site, q.start, q.end, kind).reset_index()
    else:
        rows = visit_reads.page_rows(db, q.site, q.start, q.end, kind)
    rows = rows[[wanted(str(p)) for p in rows["page"]]] if len(rows) else rows
    for name, a, b in buckets:
        part = rows
        if len(buckets) > 1 and len(rows):
            lo, hi = schema.epoch_ms(a), schema.epoch_ms(b)
            part = rows[(rows["time"] >= lo) & (rows["time"] < hi)]
        if kind == "views":
            found[name] = {"pageviews": int(part["pageviews"].sum()) if len(part) else 0}
        else:
            visits = int(part["visits"].sum()) if len(part) else 0
            found[name] = {
                "visits": visits,
                "bounce_rate": 100 * int(part["bounces"].sum()) / visits if visits else None,
                "visit_duration": int(part["duration"].sum()) / 1000 / visits
                if visits else None}
    if "events" in q.metrics:
        counted = events_by_bucket(db, q, buckets, lambda dim, value: dim == cells.PAGE
                                   and wanted(value))
        for name in found:
            found[name]["events"] = counted[name]
    return found, visit_reads.is_exact(q.start, q.end, q.now)


def events_by_bucket(db, q: StatsQuery, buckets: list, keep=None) -> dict:
    """Custom events per bucket label (None: the totals) from the quarters' cells: the
    site's (``keep`` None), else those of the cells ``keep(dim, value)`` accepts."""
    def accepted(name: str, dim: str, value: str) -> bool:
        if name == cells.PAGEVIEW:
            return False
        return dim == cells.TOTAL if keep is None else keep(dim, value)

    if len(buckets) == 1:
        (name, a, b), = buckets
        found = custom_reads.cells_over(db, q.site, a, b, accepted)
        return {name: sum(cell.events for cell in found.values())}
    out = {name: 0 for name, _, _ in buckets}
    starts = [schema.epoch_ms(a) for _, a, _ in buckets]
    ends = [schema.epoch_ms(b) for _, _, b in buckets]
    for time, name, dim, value, events, *_ in visit_reads.quarter_rows(
            db, q.site, q.start, q.end, store.EVENTS):
        at = bisect.bisect_right(starts, time) - 1
        if at >= 0 and time < ends[at] and accepted(name, dim, value):
            out[buckets[at][0]] += int(events)
    return out
