"""What the Sources page shows, from the URL alone (no Dash): the range, as History
offers it (its presets, "All time" and any dates), and the words around the figures."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass

from dashboard.ranges import ALL_TIME, PRESETS, default_preset, period
from dashboard.state import choice, first
from queries import validation
from queries.reads.sources import Comparison

PATH = "/sources"
RANGE_KEY = "range"
# Links written when the page offered only these: ``days=1|7|30``.
DAYS_KEY = "days"
DAYS = {"1": "today", "7": "7d", "30": "30d"}
OTHER = {"log": "beacon", "beacon": "log"}


@dataclass(frozen=True)
class Range:
    """The page's part of the URL: a History preset, or ``custom`` with its local dates
    (``end`` excluded), as History writes them."""

    preset: str
    start: str | None = None
    end: str | None = None

    @classmethod
    def from_query(cls, query: Mapping[str, list[str]], opening: str) -> Range:
        """The URL's range; ``opening``: the site's without one (History's choice: the
        last 7 days if they hold hits, else all of its days)."""
        old = DAYS.get(first(query, DAYS_KEY) or "")
        preset = choice(query, RANGE_KEY, PRESETS, old or opening)
        return cls(preset, first(query, "start"), first(query, "end"))


def opening(span: tuple[dt.datetime, dt.datetime] | None, now: dt.datetime, tz: str) -> str:
    """The range a site opens on (``span``: its first and last day of hits)."""
    return default_preset(span, now, tz)


def bounds(shown: Range, tz: str, now: dt.datetime,
           span: tuple[dt.datetime, dt.datetime] | None) -> tuple[dt.datetime, dt.datetime]:
    """The UTC bounds of ``shown`` as of ``now``; raises a ``HitboardError`` that says
    what is wrong with a range the page cannot read."""
    found = period(shown.preset, "day", now, tz, shown.start, shown.end,
                   span if shown.preset == ALL_TIME else None)
    return found.start, found.end


def picker_dates(start: dt.datetime, end: dt.datetime, tz: str) -> tuple[str, str]:
    """The local dates the date picker shows for [start, end) (its end date included)."""
    zone = validation.timezone(tz)
    last = (end - dt.timedelta(microseconds=1)).astimezone(zone)
    return start.astimezone(zone).date().isoformat(), last.date().isoformat()


def picked(start_date: str | None, end_date: str | None) -> dict[str, str] | None:
    """The URL's bounds for the local days picked (``end_date`` included), None while a
    date is missing or unreadable."""
    try:
        first_day = dt.date.fromisoformat(str(start_date)[:10])
        last_day = dt.date.fromisoformat(str(end_date)[:10])
        return {"start": first_day.isoformat(),
                "end": (last_day + dt.timedelta(days=1)).isoformat()}
    except (TypeError, ValueError, OverflowError):
        return None


def summary(site: str, found: Comparison, retention: int, pages: tuple[str, ...] = ()
            ) -> str:
    """Which source the counters count, and where the comparison's data comes from."""
    kept = (f"From the raw events of both sources, kept {retention} days after they are "
            "read: hits read earlier have nothing to compare.")
    if pages:
        kept += f" Only {', '.join(pages)}, as chosen above."
    if found.primary in OTHER:
        return (f"{site}'s counters count its {found.primary}; its {OTHER[found.primary]} "
                f"hits are kept apart and shown here only, so nothing counts twice. {kept}")
    if found.primary == "generator":
        return f"{site} is fed by the load generator: it has no log and no beacon. {kept}"
    return f"Nothing has fed {site} yet: its first source will be the one counted. {kept}"


def empty_words(found: Comparison) -> str | None:
    """What an empty or one-sided comparison lacks, None when both sources are there or
    the load generator feeds the site (the summary says it has neither)."""
    if found.primary == "generator":
        return None
    totals = found.totals
    has_log = totals["log_pageviews"] or totals["log_bots"]
    has_beacon = totals["beacon_pageviews"]
    if has_log and has_beacon:
        return None
    if not has_log and not has_beacon:
        return "Neither a log nor the beacon has pages of this site in this range."
    missing = "its access log (hitboard ingest)" if not has_log else "the tracking tag (Sites)"
    return f"Only one source fed it in this range: the comparison needs {missing} too."
