"""Reads of presenter mode: the per-minute line, today against yesterday, the ticker.

Each is one or two indexed reads of what is already stored (pre-aggregated minutes,
the newest raw events), so a room's screen costs no more than the Live page.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import NamedTuple

import pandas as pd

from .. import validation
from ..dimensions.geo import UNKNOWN, country
from ..dimensions.page_reads import MAX_SCANNED, Active
from ..dimensions.reads import active_visitors
from ..dimensions.referrer import own_hosts, referrer_host
from ..events.recent import recent_hits
from ..stats.series import daily_series, series
from .live import RECENT_MINUTES, recent_visits, top_today

__all__ = ["MAX_SCANNED", "RECENT_MINUTES", "DayComparison", "Kpis", "kpis", "last_30_days",
           "minute_counts", "ticker", "today_vs_yesterday", "top_today"]

MINUTE = dt.timedelta(minutes=1)
DAY = dt.timedelta(days=1)


def minute_counts(db, site: str, now: dt.datetime, minutes: int = 15
                  ) -> list[tuple[dt.datetime, int]]:
    """Whole-site hits per UTC minute over the last ``minutes`` minutes, the current
    (still filling) minute last: ``[(minute start, hits), ...]``."""
    now = validation.timestamp(now)
    current = now.replace(second=0, microsecond=0)
    frame = series(db, site, current - (minutes - 1) * MINUTE, current + MINUTE, "minute")
    totals = frame.sum(axis=1)
    return [(t.to_pydatetime().astimezone(dt.UTC), int(v)) for t, v in totals.items()]


@dataclass(frozen=True)
class DayComparison:
    today: int       # since local midnight, up to now
    yesterday: int   # yesterday, from its midnight up to the same time of day

    @property
    def change(self) -> float | None:
        """Today against yesterday at the same time, in %; None without yesterday."""
        if not self.yesterday:
            return None
        return 100.0 * (self.today - self.yesterday) / self.yesterday


def today_vs_yesterday(db, site: str, now: dt.datetime, tz: str = "UTC") -> DayComparison:
    """Hits today so far and yesterday up to the same time of day (minutes, one read
    per day), so a morning is never compared with a whole day."""
    zone = validation.timezone(tz)
    now = validation.timestamp(now)
    end = now.replace(second=0, microsecond=0) + MINUTE
    midnight = validation.local_midnight(now, zone)
    same_time = (end.astimezone(zone) - DAY).astimezone(dt.UTC)  # local: 23 or 25 h back
    today = series(db, site, midnight, end, "minute", tz=zone).to_numpy().sum()
    yesterday = series(db, site, validation.local_midnight(now, zone, 1), same_time,
                       "minute", tz=zone).to_numpy().sum()
    return DayComparison(today=int(today), yesterday=int(yesterday))


def ticker(db, site: str, n: int = 8) -> list[dict]:
    """The ``n`` newest requests as the ticker shows them: time, page, referrer host
    (``(direct)``, ``(internal)``...) and country (``None`` when unknown)."""
    own = own_hosts(site)
    rows = []
    for hit in recent_hits(db, site, None, n):
        code = country(hit.get("host"))
        rows.append({"id": str(hit.get("_id")), "time": hit["time"], "page": hit.get("path", ""),
                     "referrer": referrer_host(hit.get("referrer"), own),
                     "country": None if code == UNKNOWN else code})
    return rows


PRESENT_ACTIVE_MINUTES = 1   # the presenter's "visitors now": the last minute


class Kpis(NamedTuple):
    """The presenter's slower cards: visitors now (raw events, all of them: a room sees
    everyone), visits begun in the last ``RECENT_MINUTES`` (``None`` unless asked for)
    and today against yesterday at the same time (the statistics' minutes)."""

    active: Active
    visits: int | None
    days: DayComparison


def kpis(db, site: str, now: dt.datetime, tz: str, visits: bool = False) -> Kpis:
    """The presenter's slower cards in one read."""
    return Kpis(active=active_visitors(db, site, now, PRESENT_ACTIVE_MINUTES),
                visits=recent_visits(db, site, now, RECENT_MINUTES) if visits else None,
                days=today_vs_yesterday(db, site, now, tz))


def last_30_days(db, site: str, now: dt.datetime, tz: str) -> pd.DataFrame:
    """The playlist's ``history-30d`` view: hits per local day over the last 30 days."""
    return daily_series(db, site, validation.local_midnight(now, tz, 29), now, tz=tz)
