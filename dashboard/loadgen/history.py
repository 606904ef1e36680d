"""Backfill: the model's counts for past days, handed to ``queries.backfill`` whole."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass

import queries
from queries.stats.backfill import BackfillTotals, DayCounts, Progress, check_days

from .model import TrafficModel
from .visitors import SyntheticVisitors


def history(model: TrafficModel, rate: float, days: int, now: dt.datetime) -> Iterator[DayCounts]:
    """The ``days`` whole UTC days before ``now``'s day, then that day up to ``now``'s
    minute (live traffic takes over from there), for every site of ``model``."""
    today = dt.datetime(now.year, now.month, now.day, tzinfo=dt.UTC)
    for offset in range(days, -1, -1):
        day = today - dt.timedelta(days=offset)
        for index, site in enumerate(model.site_names):
            counts = model.day_counts(index, day, rate, until=now if offset == 0 else None)
            yield DayCounts(site, day, model.page_names[site], counts)


def backfill_history(db, model: TrafficModel, rate: float, days: int = 30,
                     now: dt.datetime | None = None, progress: Progress | None = None,
                     dimensions=None) -> BackfillTotals:
    """Register the model's sites as synthetic, then write ``days`` days of their history
    (and, given a DimensionRecorder, their dimensions and visitors)."""
    check_days(days)
    now = now or dt.datetime.now(dt.UTC)
    queries.register_synthetic(db, model.site_names)
    site_days = (days + 1) * len(model.site_names)
    # Progress counts site-days, once for the counts and once for the dimensions.
    total = site_days * (1 if dimensions is None else 2)
    totals = queries.backfill(db, history(model, rate, days, now), total=site_days,
                              progress=progress and (lambda done, _: progress(done, total)))
    if dimensions is not None:
        backfill_dimensions(dimensions, model, rate, days, now, progress=progress and (
            lambda done, _: progress(site_days + done, total)))
    return totals


def backfill_dimensions(dimensions, model: TrafficModel, rate: float, days: int,
                        now: dt.datetime, progress: Progress | None = None) -> int:
    """The same history's hits per page and hour, given synthetic dimensions (the
    counts are seeded, so they equal the backfilled ones); flushed day by day. Cells go
    hour by hour, so a visit runs on to other pages of its hour."""
    visitors = SyntheticVisitors(dimensions, model.seed + 1)
    hits = 0
    total = (days + 1) * len(model.site_names)
    for done, counts in enumerate(history(model, rate, days, now), 1):
        by_hour = counts.counts.reshape(len(counts.pages), 24, 60).sum(axis=2).T
        hours, pages = by_hour.nonzero()
        cells = by_hour[hours, pages]
        drawn = visitors.draw_many(counts.site, cells)
        visitors.record_cells([
            (counts.site, counts.pages[page],
             counts.day + dt.timedelta(hours=hour, minutes=30), visits)
            for page, hour, visits in zip(pages.tolist(), hours.tolist(), drawn,
                                          strict=True)])
        hits += int(cells.sum())
        dimensions.flush()
        if progress:
            progress(done, total)
    return hits


@dataclass(frozen=True)
class BackfillPlan:
    """What a backfill would add, shown before it writes: the expected hits (the model's
    mean; the written counts are Poisson draws around it), days and sites."""

    hits: int
    days: int
    sites: tuple[str, ...]
    pages: int


def plan_backfill(model: TrafficModel, rate: float, days: int,
                  now: dt.datetime | None = None) -> BackfillPlan:
    check_days(days)
    now = now or dt.datetime.now(dt.UTC)
    today = dt.datetime(now.year, now.month, now.day, tzinfo=dt.UTC)
    per_minute = model.minute_factors() * rate * 60            # all sites together
    done_today = (now - today).total_seconds() / 60
    cut = int(done_today)
    partial = per_minute[:cut].sum() + (per_minute[cut] * (done_today - cut)
                                        if cut < len(per_minute) else 0)
    return BackfillPlan(hits=round(days * per_minute.sum() + partial), days=days,
                        sites=tuple(model.site_names), pages=model.pages)
