"""Backfill: the model's counts for past days, handed to ``jobs.backfill`` whole."""

from __future__ import annotations

import dataclasses
import datetime as dt
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from ..dimensions.assets import page_of
from ..dimensions.classify import is_bot_agent
from ..jobs.backfill import BackfillTotals, DayCounts, Progress, backfill, check_days
from ..stats import schema
from ..stats.sites import register_synthetic
from ..visits.build import backfilled
from ..visits.sessions import HOUR_MS, MINUTE_MS, QUARTER_MS, Pageview
from .events import history_events
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
    (and, given a DimensionRecorder, their dimensions and visitors, with the bot hits
    counted apart in the statistics too)."""
    check_days(days)
    now = now or dt.datetime.now(dt.UTC)
    register_synthetic(db, model.site_names)
    site_days = (days + 1) * len(model.site_names)
    items = history(model, rate, days, now)
    if dimensions is not None:
        rng = np.random.default_rng([model.seed, 3])
        items = with_visitors(items, dimensions, model.seed + 1,
                              lambda site, runs, views: backfilled(
                                  db, site, runs, views, history_events(runs, rng)))
    return backfill(db, items, total=site_days, progress=progress)


def with_visitors(items: Iterable[DayCounts], dimensions, seed: int,
                  visits: Callable[[str, list[Pageview], list], object] | None = None
                  ) -> Iterator[DayCounts]:
    """Each site-day of ``items`` cut into visits, hour by hour (a visit runs on to
    other pages of its hour), their dimensions recorded and flushed day by day; yielded
    with the bot hits among its minutes (the visits' bots' shares, drawn among the
    minutes of their page and hour). ``visits(site, runs, views)``, if given, gets each
    site-day's pageviews (``visit_runs``, ``people_views``)."""
    visitors = SyntheticVisitors(dimensions, seed)
    for counts in items:
        by_hour = counts.counts.reshape(len(counts.pages), 24, 60).sum(axis=2).T
        hours, pages = by_hour.nonzero()
        cells = by_hour[hours, pages]
        drawn = visitors.draw_many(counts.site, cells)
        visitors.record_cells([
            (counts.site, counts.pages[page],
             counts.day + dt.timedelta(hours=hour, minutes=30), visits)
            for page, hour, visits in zip(pages.tolist(), hours.tolist(), drawn,
                                          strict=True)])
        dimensions.flush()
        bots = np.array([sum(v.share for v in visits if is_bot_agent(v.agent))
                         for visits in drawn], dtype=np.int64)
        rng = np.random.default_rng(zlib.crc32(f"{counts.site}/{counts.day:%Y%m%d}".encode()))
        robots = bot_minutes(counts.counts, pages, hours, bots, rng)
        if visits is not None:
            visits(counts.site, visit_runs(counts, pages, hours, drawn),
                   people_views(counts, robots))
        yield dataclasses.replace(counts, bots=robots)


def visit_runs(counts: DayCounts, pages: np.ndarray, hours: np.ndarray,
               drawn: list[list]) -> list[Pageview]:
    """The people's pageviews of a site-day whose cells (``pages[i]``, ``hours[i]``) were
    cut into the visits ``drawn[i]``, as one run per visit and cell: each visit takes
    the next of its cell's hits in minute order (a page's static files are not
    pageviews)."""
    runs: list[Pageview] = []
    known: dict = {}
    day = schema.epoch_ms(counts.day)
    per_minute = counts.counts.reshape(len(counts.pages), 24, 60)
    for page, hour, visits in zip(pages.tolist(), hours.tolist(), drawn, strict=True):
        name = page_of(counts.pages[page], known)
        ends = np.cumsum(per_minute[page, hour])     # hits of the cell up to each minute
        taken = 0
        for visit in visits:
            if name is not None and not is_bot_agent(visit.agent):
                first, last = np.searchsorted(ends, [taken, taken + visit.share - 1],
                                              side="right").tolist()
                start = day + hour * HOUR_MS
                runs.append(Pageview(f"{visit.host}\x00{visit.agent}",
                                     start + first * MINUTE_MS, name,
                                     start + last * MINUTE_MS, visit.share))
            taken += visit.share
    return runs


def people_views(counts: DayCounts, robots: np.ndarray) -> list[tuple[int, str, int]]:
    """``(quarter, page, pageviews)`` of the people's hits on pages (not static files)."""
    known: dict = {}
    people = (counts.counts - robots).reshape(len(counts.pages), 96, 15).sum(axis=2)
    day = schema.epoch_ms(counts.day)
    rows, quarters = people.nonzero()
    return [(day + q * QUARTER_MS, name, int(people[page, q]))
            for page, q in zip(rows.tolist(), quarters.tolist(), strict=True)
            if (name := page_of(counts.pages[page], known)) is not None]


def bot_minutes(counts: np.ndarray, pages: np.ndarray, hours: np.ndarray, bots: np.ndarray,
                rng: np.random.Generator) -> np.ndarray:
    """Per page and minute, the bot hits among ``counts`` (pages × 1440): ``bots[i]``
    hits of cell ``(pages[i], hours[i])`` drawn without replacement among its minutes'
    hits, for all cells at once (each cell's hits in random order, its first
    ``bots[i]`` taken)."""
    out = np.zeros_like(counts)
    if not bots.sum():
        return out
    per_cell = counts.reshape(len(counts), 24, 60)[pages, hours]          # cells × 60
    sizes = per_cell.sum(axis=1)
    cell = np.repeat(np.arange(len(sizes)), sizes)
    minute = np.repeat(np.tile(np.arange(60), len(sizes)), per_cell.ravel())
    order = np.lexsort((rng.random(len(cell)), cell))       # by cell, random within one
    rank = np.arange(len(order)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    chosen = order[rank < bots[cell[order]]]
    np.add.at(out, (pages[cell[chosen]], hours[cell[chosen]] * 60 + minute[chosen]), 1)
    return out


def backfill_dimensions(dimensions, model: TrafficModel, rate: float, days: int,
                        now: dt.datetime, progress: Progress | None = None) -> int:
    """The dimensions of the same history alone (the counts are seeded, so they equal
    the backfilled ones): hits counted. Benchmarks time this part apart."""
    hits = 0
    total = (days + 1) * len(model.site_names)
    items = with_visitors(history(model, rate, days, now), dimensions, model.seed + 1)
    for done, counts in enumerate(items, 1):
        hits += int(counts.counts.sum())
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
