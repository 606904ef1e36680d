"""A site's access logs beside its beacon (the Sources view), per page and day of a
zone: what each source saw of the same pages, from the raw events of both (those counted
and those kept apart, ``events.apart``), so within the events' retention.

Per page and day: the log's pageviews (people, a ``GET`` answered 2xx or 304, as visits
count them) and the beacon's (people), their difference; what only a log shows: bots'
requests for the page, those of AI crawlers among them (by user agent,
``dimensions.aicrawlers``), and the log's pageviews by visitors (address and agent) that
never ran the script in the range. The estimated blocked or no-JavaScript share is
(log pageviews − beacon pageviews) / log pageviews over the pages and days both saw.
Given pages, every figure is theirs; a visitor who ran the script on any page of the
site still ran it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from .. import validation
from ..dimensions.aicrawlers import is_ai_crawler
from ..dimensions.assets import page_of
from ..dimensions.classify import is_bot_agent
from ..events import reads as event_reads
from ..stats import schema
from ..stats.sites import counted_source, site_settings
from ..visits.build import answered
from ..visits.sessions import QUARTER_MS

LOG, BEACON, GENERATOR = "log", "beacon", "generator"
FIGURES = ("log_pageviews", "beacon_pageviews", "difference", "log_bots", "ai_crawlers",
           "without_script")
_COLUMNS = ("host", "user_agent", "path", "method", "status")


@dataclass(frozen=True)
class Comparison:
    rows: pd.DataFrame            # day, page and ``FIGURES``, the most seen first
    totals: dict[str, int]        # ``FIGURES`` over the range
    share: float | None           # the estimated blocked/no-JS share (None: no page both saw)
    primary: str | None           # the source the site's counters count
    generator: int                # the load generator's hits (a synthetic site's)


def compare(db, site: str, start: dt.datetime, end: dt.datetime, tz: str = "UTC",
            n: int = 100, pages: Iterable[str] = ()) -> Comparison:
    """The two sources of [start, end), per page and day of ``tz`` (``n`` rows), of
    ``pages`` only if any are given."""
    site = validation.site(site)
    wanted = {validation.page(page) for page in pages}
    start, end = validation.time_range(start, end)
    zone = validation.timezone(tz)
    settings = site_settings(db, site)
    cells: dict[tuple, list[int]] = {}
    unseen: dict[tuple, dict[str, int]] = {}   # log pageviews per cell, per visitor
    seen: set[str] = set()                    # visitors the beacon saw
    generator = 0
    counted: set[str] = set()                 # the sources found among counted events
    known: dict = {}
    days = _LocalDays(zone)
    for collection in (schema.EVENTS, schema.APART):
        for from_log, times, columns in event_reads.columns(db, site, start, end, _COLUMNS,
                                                            collection):
            hosts, host_codes = columns["host"]
            agents, agent_codes = columns["user_agent"]
            paths, path_codes = columns["path"]
            statuses, status_codes = columns["status"]
            people = [not is_bot_agent(a, settings.unknown_bots) for a in agents]
            crawlers = [is_ai_crawler(a) for a in agents]
            pages = [page_of(p, known) for p in paths]
            good = answered(columns) if from_log else None
            beacon = not from_log
            for i, ms in enumerate(times):
                page, a = pages[path_codes[i]], agent_codes[i]
                if beacon and statuses[status_codes[i]] is not None:
                    generator += 1
                    continue
                if collection == schema.EVENTS:
                    counted.add(BEACON if beacon else LOG)
                if page is None:
                    continue
                visitor = f"{hosts[host_codes[i]] or ''}\x00{agents[a] or ''}"
                if not from_log and people[a]:
                    seen.add(visitor)
                if wanted and page not in wanted:
                    continue
                day = days[ms // QUARTER_MS]
                cell = cells.setdefault((day, page), [0] * len(FIGURES))
                if not from_log:
                    cell[1] += people[a]
                elif not people[a]:
                    cell[3] += 1
                    cell[4] += crawlers[a]
                elif good[i]:
                    cell[0] += 1
                    by_visitor = unseen.setdefault((day, page), {})
                    by_visitor[visitor] = by_visitor.get(visitor, 0) + 1
    for key, by_visitor in unseen.items():
        cells[key][5] = sum(n for visitor, n in by_visitor.items() if visitor not in seen)
    for cell in cells.values():
        cell[2] = cell[0] - cell[1]
    return _comparison(cells, n, _primary(settings, counted, generator), generator)


def _primary(settings, counted: set[str], generator: int) -> str | None:
    """The source the site's counters count: as recorded or registered, else as the
    counted events of the range show it (a store older than primary sources)."""
    found = counted_source(settings)
    if found or generator:
        return found or GENERATOR
    return next((source for source in (LOG, BEACON) if source in counted), None)


class _LocalDays(dict):
    """Quarter hour (ms // ``QUARTER_MS``) -> its day in the zone, worked out once: every
    zone in use changes day on a quarter hour."""

    def __init__(self, zone):
        super().__init__()
        self.zone = zone

    def __missing__(self, quarter: int) -> dt.date:
        day = self[quarter] = dt.datetime.fromtimestamp(quarter * QUARTER_MS / 1000,
                                                        self.zone).date()
        return day


def _comparison(cells: dict[tuple, list[int]], n: int, primary: str | None,
                generator: int) -> Comparison:
    frame = pd.DataFrame([(day, page, *figures) for (day, page), figures in cells.items()],
                         columns=["day", "page", *FIGURES])
    totals = {name: int(frame[name].sum()) for name in FIGURES}
    both = frame[(frame["log_pageviews"] > 0) & (frame["beacon_pageviews"] > 0)]
    logged = int(both["log_pageviews"].sum())
    share = ((logged - int(both["beacon_pageviews"].sum())) / logged) if logged else None
    frame["seen"] = frame["log_pageviews"] + frame["beacon_pageviews"]
    frame = frame.sort_values(["seen", "log_bots", "day", "page"],
                              ascending=[False, False, False, True])
    return Comparison(frame.drop(columns="seen").head(n).reset_index(drop=True), totals,
                      share, primary, generator)
