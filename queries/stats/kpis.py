"""Headline numbers of the live page: hits this minute, in the last hour, today."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from .. import validation
from .series import series

MINUTE = dt.timedelta(minutes=1)


@dataclass(frozen=True)
class HitTotals:
    this_minute: int  # the current clock minute so far
    last_hour: int    # the current minute and the 59 before it
    today: int        # since midnight in the chosen time zone


def hit_totals(db, site: str, now: dt.datetime, pages: Sequence[str] | None = None,
               tz="UTC") -> HitTotals:
    """Totals for the selected pages (the whole site when none) as of ``now``. Two reads:
    minutes of the last hour, hours of today (minutes in zones with a half-hour offset)."""
    zone = validation.timezone(tz)
    now = validation.timestamp(now)
    minute = now.replace(second=0, microsecond=0)
    minutes = series(db, site, minute - 59 * MINUTE, minute + MINUTE, "minute", pages, zone)
    midnight = validation.local_midnight(now, zone)
    hours = series(db, site, midnight, minute + MINUTE, "hour", pages, zone)
    per_minute = minutes.sum(axis=1)
    return HitTotals(this_minute=int(per_minute.iloc[-1]), last_hour=int(per_minute.sum()),
                     today=int(hours.to_numpy().sum()))
