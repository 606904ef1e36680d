"""What the Sources page shows, from the URL alone (no Dash): the range, and the words
around the figures."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from queries import validation
from queries.reads.sources import Comparison

PATH = "/sources"
DAYS_KEY = "days"
DAYS = {"1": "Today", "7": "7 days", "30": "30 days"}
DEFAULT_DAYS = "7"
OTHER = {"log": "beacon", "beacon": "log"}


def days_of(query: Mapping[str, list[str]]) -> str:
    """The URL's number of days, one of ``DAYS`` (else the default)."""
    found = (query.get(DAYS_KEY) or [DEFAULT_DAYS])[0]
    return found if found in DAYS else DEFAULT_DAYS


def span(days: str, tz: str, now: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    """From the start of the first of ``days`` local days to now."""
    return validation.local_midnight(now, tz, int(days) - 1), now


def summary(site: str, found: Comparison, retention: int, pages: tuple[str, ...] = ()
            ) -> str:
    """Which source the counters count, and where the comparison's data comes from."""
    kept = (f"From the raw events of both sources, kept {retention} days: older days have "
            "nothing to compare.")
    if pages:
        kept += f" Only {', '.join(pages)}, as chosen above."
    if found.primary in OTHER:
        return (f"{site}'s counters count its {found.primary}; its {OTHER[found.primary]} "
                f"hits are kept apart and shown here only, so nothing counts twice. {kept}")
    if found.primary == "generator":
        return f"{site} is fed by the load generator: it has no log and no beacon. {kept}"
    return f"Nothing has fed {site} yet: its first source will be the one counted. {kept}"


def empty_words(found: Comparison) -> str | None:
    """What an empty or one-sided comparison lacks, None when both sources are there."""
    totals = found.totals
    has_log = totals["log_pageviews"] or totals["log_bots"]
    has_beacon = totals["beacon_pageviews"]
    if has_log and has_beacon:
        return None
    if not has_log and not has_beacon:
        return "Neither a log nor the beacon has pages of this site in this range."
    missing = "its access log (hitboard ingest)" if not has_log else "the tracking tag (Sites)"
    return f"Only one source fed it in this range: the comparison needs {missing} too."
