"""Reads of the dimension counters and visitor sketches: small functions returning
pandas DataFrames (or numbers), counting exactly the range asked.

A range's whole UTC hours come from the pre-aggregated documents (``counted``), the
parts of hours it cuts from the raw events (``spans``); where those are gone the nearest
whole hours stand in, and a frame's ``attrs`` say so (``exact``, ``counted``: the span
really counted). Visitors per value: ``visitor_reads``. One page's breakdown comes from
raw events (``page_reads``), and the frame's ``attrs["note"]`` says so.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter

import pandas as pd

from .. import validation
from ..stats.series import series
from . import page_reads
from .counted import cover_values
from .encoding import OTHER, UnknownDimensionError, dimension
from .page_reads import active_visitors, count_events, events_breakdown, page_breakdown
from .sketches import Estimate
from .spans import cover
from .value_series import filtered_series
from .visitor_reads import Visitors, value_visitors, visitors, visitors_series

WHOLE = validation.WHOLE_SITE
COLUMNS = ["value", "hits", "visitors", "visitors_error"]
__all__ = ["UnknownDimensionError", "Visitors", "active_visitors", "bot_share", "breakdown",
           "dimension", "filtered_series", "recent_breakdown", "top_not_found",
           "value_bot_share", "visitors", "visitors_series"]


def unsplit_note(unsplit: int) -> str:
    return (f"{unsplit:,} bot hits stored before bots were counted apart are counted as "
            "humans" if unsplit else "")


def _ranked(counts: Counter, visitors: dict[str, Estimate], n: int | None) -> pd.DataFrame:
    """Values by hits, most first, ``(other)`` (values past a document's cap) last;
    ``visitors_error`` the visitors' (0: exact; see ``sketches.Estimate``)."""
    rows = [{"value": v, "hits": int(h),
             "visitors": visitors[v].n if v in visitors else None,
             "visitors_error": visitors[v].error if v in visitors else None}
            for v, h in counts.items() if h > 0]
    rows.sort(key=lambda r: (r["value"] == OTHER, -r["hits"], r["value"]))
    if n is not None:
        rows = rows[: max(int(n), 0)]
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame["hits"] = frame["hits"].astype("int64")
    for column in ("visitors", "visitors_error"):
        frame[column] = pd.to_numeric(frame[column]).astype("Int64")
    return frame


def breakdown(db, site: str, by: str, start: dt.datetime, end: dt.datetime,
              page: str | None = None, n: int | None = None, humans: bool = False,
              bots: bool = False, now: dt.datetime | None = None) -> pd.DataFrame:
    """Hits and visitors per value of dimension ``by`` over exactly [start, end), most
    hits first; ``(other)`` last; ``visitors_error`` the visitors' (0: exact). Bots left
    out if ``humans`` (``attrs["unsplit"]``: old bot hits that could not be), the bots'
    hits alone if ``bots``. ``attrs``: ``exact`` (else the hits are ``counted``'s, the
    nearest whole hours), ``visitors_exact``."""
    dim = dimension(by)
    site = validation.site(site)
    start, end = validation.time_range(start, end)
    page = WHOLE if page in (None, "", WHOLE) else validation.page(page)
    if page != WHOLE:
        frame = page_breakdown(db, site, page, dim, start, end, humans=humans)
        frame["visitors_error"] = pd.array([0] * len(frame), dtype="Int64")  # raw events
        frame.attrs.update(exact=True, counted=(start, end), visitors_exact=True)
        return frame.head(max(int(n), 0)) if n is not None else frame
    found = cover(db, site, start, end, now)
    counts, unsplit, people = cover_values(db, site, dim, found, humans, bots)
    seen, exact = value_visitors(db, site, dim, found, counts, people, humans, bots, now)
    frame = _ranked(counts, seen, n)
    frame.attrs.update(note=unsplit_note(unsplit), unsplit=unsplit, exact=found.exact,
                       counted=found.counted, visitors_exact=exact)
    return frame


# The share of a window's hits its raw events must hold for Live to read them (a
# backfilled hour has counters and no events).
COVERED = 0.9


def recent_breakdown(db, site: str, by: str, start, end, n: int | None = None,
                     humans: bool = False) -> pd.DataFrame:
    """Hits and visitors per value of ``by`` over exactly [start, end) (Live's last
    hour), from the raw events of that window: a value's visitors are those of the same
    hits. Without events in the window (a source that writes none: ``--no-events``; a
    backfill), with events for less than ``COVERED`` of its hits, or with more than
    ``page_reads.MAX_SCANNED`` (a busy site: the read is refreshed every few seconds),
    the counters give the hits of its whole hours, and no visitors; ``attrs["note"]``
    says so."""
    dim = dimension(by)
    site = validation.site(site)
    start, end = validation.time_range(start, end)
    events = count_events(db, site, start, end, page_reads.MAX_SCANNED)
    hits = (int(series(db, site, start, end, "minute").to_numpy().sum())
            if 0 < events <= page_reads.MAX_SCANNED else None)   # a busy hour needs no count
    if hits is not None and events >= COVERED * hits:
        frame = events_breakdown(db, site, dim, start, end, humans)
        frame.attrs["note"] = ""
    else:
        hours = (start.replace(minute=0, second=0, microsecond=0), end)
        frame = breakdown(db, site, dim, *hours, humans=humans, now=end)
        frame["visitors"] = pd.array([None] * len(frame), dtype="Int64")
        why = (f"over {page_reads.MAX_SCANNED:,} hits in this hour, too many to read as "
               "raw events every few seconds" if events > page_reads.MAX_SCANNED else
               f"raw events kept for only {events:,} of its {hits:,} hits" if events else
               "no raw events kept for this hour")
        frame.attrs["note"] = (f"{why}: hits from the counters' whole hours, visitors "
                               "unknown") if len(frame) else ""
    return frame.head(max(int(n), 0)) if n is not None else frame


def top_not_found(db, site: str, start, end, n: int = 10, humans: bool = False,
                  now: dt.datetime | None = None) -> pd.DataFrame:
    """The most requested paths answered 404: columns path, hits."""
    frame = breakdown(db, site, "notfound", start, end, n=n, humans=humans, now=now)
    found = frame.rename(columns={"value": "path"})[["path", "hits"]]
    found.attrs.update(frame.attrs)
    return found


def bot_share(db, site: str, start, end, page: str | None = None,
              now: dt.datetime | None = None) -> float:
    """Bots' share of all hits in the range (0 when there were none)."""
    frame = breakdown(db, site, "bot", start, end, page, now=now)
    total = int(frame["hits"].sum())
    bots = int(frame.loc[frame["value"] == "bot", "hits"].sum())
    return bots / total if total else 0.0


def value_bot_share(db, site: str, by: str, value: str, start, end,
                    now: dt.datetime | None = None) -> float:
    """Bots' share of the hits whose ``by`` is ``value`` (e.g. referrer = news.example):
    the counters count the bots by the same values."""
    dim = dimension(by)
    site = validation.site(site)
    start, end = validation.time_range(start, end)
    found = cover(db, site, start, end, now)
    everyone, _, _ = cover_values(db, site, dim, found)
    bots, _, _ = cover_values(db, site, dim, found, bots=True)
    hits = everyone.get(str(value), 0)
    return bots.get(str(value), 0) / hits if hits else 0.0
