"""Visits recomputed from the raw events of the hours a rollup run touched, the way the
rollups are: every hour whose visits the new events may change is computed again, whole,
from every pageview around it, and replaced (``store.write_hours``).

Why from events and not as hits arrive: the events are already written exactly once
(a log line's event by its byte offset), by every process (``serve --workers``, an
ingest beside the server, an ingest's workers) into one place, so a visitor's hits meet
there whatever process took them; lines out of order, late and repeated are just events;
and replacing an hour with the value computed from the same events any number of times
leaves the same document, so a run killed anywhere is repeated, never counted twice.

Which hours: new pageviews in the touched hours [a, b) may start visits there, extend
visits that started before a (back to where such a chain starts) and join visits that
started up to one timeout after b to earlier ones. So a window [lo, hi) is read: lo
moves back an hour at a time until no visit reaching the touched hours starts in its
first ``margin`` (then every start from ``lo + margin`` on is known exactly: see
``sessions``), hi moves on until no visit starting before ``b + margin`` is still open
at hi, or the events end. The hours [lo + margin, b + margin) are written.
"""

from __future__ import annotations

import datetime as dt
from array import array
from collections.abc import Iterable, Sequence

import numpy as np

from ..dimensions.assets import page_of
from ..dimensions.classify import is_bot_agent
from ..events import custom as raw
from ..events import reads as event_reads
from ..stats import schema
from ..stats.sites import site_settings
from . import cells, store
from .sessions import HOUR_MS, MINUTE_MS, Pageview, count_views, sessionize, tally

# Checkpoint: every kept event's hours had their visits cut as this version cuts them
# ("visits" before pageviews were counted per page and visitor for page goals).
CAUGHT_UP = "visits.pageviews"
SLICE_MS = 24 * HOUR_MS          # touched hours recomputed a day at a time at most
MAX_REACH_MS = 7 * 24 * HOUR_MS  # how far a window may grow past its hours, each way
_COLUMNS = ("host", "user_agent", "path", "method", "status")


def recompute(db, touched: dict[str, set[dt.datetime]]) -> int:
    """Recompute the visits of the hours ``touched`` (per site, UTC hour starts) may
    change; returns the day documents written."""
    written = 0
    for site, hours in touched.items():
        settings = site_settings(db, site)
        raw_span = raw.span(db, site)       # custom events: cut per event (``sessions``)
        found = [b for b in (event_reads.span(db, site), raw_span) if b]
        if not found:
            continue
        edge = (min(schema.epoch_ms(b[0]) for b in found),
                max(schema.epoch_ms(b[1]) for b in found))
        timeout = settings.visit_ms
        known: dict = {}
        days: set[int] = set()
        span = _span_in_frames if raw_span is None else _span_in_python
        for a, b in slices(sorted(schema.epoch_ms(h) for h in hours)):
            days |= span(db, site, a, b, timeout, settings.unknown_bots, edge, known)
        store.refresh_sums(db, site, days)
        written += len(days)
    return written


def is_caught_up(db) -> bool:
    """Whether every hour of the events kept has had its visits cut: a store written
    before visits were counted, or before their pageviews' cells, has not (its events'
    hours were rolled up already, so no run would touch them again: the next run takes
    them all; hours whose events had expired keep no pageview cells)."""
    return db[schema.CHECKPOINTS].find_one({"_id": CAUGHT_UP}) is not None


def caught_up(db, days: int) -> None:
    """Note that a run has cut the visits of every hour of the events kept."""
    db[schema.CHECKPOINTS].replace_one(
        {"_id": CAUGHT_UP}, {"at": dt.datetime.now(dt.UTC), "days": days}, upsert=True)


def slices(hours: list[int]) -> list[tuple[int, int]]:
    """Sorted hour starts (ms) → ``[a, b)`` spans: hours at most two apart joined (their
    windows would overlap anyway), then cut into pieces of at most ``SLICE_MS``."""
    spans: list[list[int]] = []
    for hour in hours:
        if spans and hour - spans[-1][1] <= 2 * HOUR_MS:
            spans[-1][1] = hour + HOUR_MS
        else:
            spans.append([hour, hour + HOUR_MS])
    return [(lo, min(lo + SLICE_MS, b)) for a, b in spans for lo in range(a, b, SLICE_MS)]


def _span_in_frames(db, site: str, a: int, b: int, timeout: int, unknown_bots: bool,
                    edge: tuple[int, int], known: dict) -> set[int]:
    """``_span_in_python``'s work on columns (``frames``): the same documents."""
    from . import frames

    margin = -(-timeout // HOUR_MS) * HOUR_MS
    lo, hi = a - margin, b + margin
    while True:
        views = frames.pageview_frame(db, site, lo, hi, unknown_bots, known)
        visits = frames.visits_of(views, timeout)
        start, last = visits["start"], visits["last"]
        back = lo > edge[0] and lo > a - MAX_REACH_MS and bool(
            ((start < lo + margin) & (last >= a)).any())
        on = hi <= edge[1] and hi < b + MAX_REACH_MS and bool(
            ((last >= hi - timeout) & (start < b + margin)).any())
        if not (back or on):
            break
        lo -= HOUR_MS * back
        hi += HOUR_MS * on
    first, end = lo + margin, b + margin
    quarters, pages, counted = frames.tallied(visits, views, first, end)
    parts = store.hour_parts(quarters, pages, range(first, end, HOUR_MS), counted)
    return store.write_hours(db, site, parts)


def _span_in_python(db, site: str, a: int, b: int, timeout: int, unknown_bots: bool,
                    edge: tuple[int, int], known: dict) -> set[int]:
    """The visits of the hours [a, b) (ms) cut and written, a pageview at a time."""
    margin = -(-timeout // HOUR_MS) * HOUR_MS       # the timeout in whole hours, rounded up
    lo, hi = a - margin, b + margin
    while True:
        views = pageviews(db, site, lo, hi, unknown_bots, known)
        visits = sessionize(views, timeout)
        back = lo > edge[0] and lo > a - MAX_REACH_MS and any(
            v.start < lo + margin and v.last >= a for v in visits)
        on = hi <= edge[1] and hi < b + MAX_REACH_MS and any(
            v.last >= hi - timeout and v.start < b + margin for v in visits)
        if not (back or on):
            break
        lo -= HOUR_MS * back
        hi += HOUR_MS * on
    first, last = lo + margin, b + margin
    inside = [v for v in views if first <= v.time < last]
    quarters, pages = tally([v for v in visits if first <= v.start < last], inside)
    parts = store.hour_parts(quarters, pages, range(first, last, HOUR_MS),
                             cells.tally(inside))
    return store.write_hours(db, site, parts)


def pageviews(db, site: str, lo: int, hi: int, unknown_bots: bool,
              known: dict | None = None) -> list[Pageview]:
    """The site's pageviews among its events of [lo, hi) (ms): pages (not assets) seen
    by people (not bots); from a log, a GET answered 2xx or 304; every beacon and load
    generator hit (their events have no log stream). Each has its event's place, so
    requests of one second keep the log's order. ``known``: paths already
    classified, shared by the calls of one recompute (agents are cached where they
    are classified)."""
    known = {} if known is None else known
    out: list[Pageview] = []
    for from_log, times, columns, bucket, places in event_reads.placed_columns(
            db, site, schema.from_epoch_ms(lo), schema.from_epoch_ms(hi), _COLUMNS):
        hosts, host_codes = columns["host"]
        agents, agent_codes = columns["user_agent"]
        paths, path_codes = columns["path"]
        pages = [page_of(p, known) for p in paths]
        agent_codes = _indexes(agent_codes)
        path_codes = _indexes(path_codes)
        wanted = (np.array([page is not None for page in pages])[path_codes]
                  & np.array([not is_bot_agent(a, unknown_bots) for a in agents])[agent_codes])
        if from_log:
            wanted &= _answered(columns)
        chosen = np.flatnonzero(wanted).tolist()
        if not chosen:
            continue
        host_of = _indexes(host_codes)[chosen].tolist()
        out += [Pageview(f"{hosts[h] or ''}\x00{agents[a] or ''}", times[i], pages[p],
                         place=(bucket, places[i]))
                for i, h, a, p in zip(chosen, host_of, agent_codes[chosen].tolist(),
                                      path_codes[chosen].tolist(), strict=True)]
    return out + custom_events(db, site, lo, hi, unknown_bots)


def _indexes(codes) -> np.ndarray:
    """A column's codes (``range``, ``array('H')`` or a list) as a numpy array."""
    if isinstance(codes, range):
        return np.arange(codes.start, codes.stop, dtype=np.int64)
    if isinstance(codes, array):
        return np.frombuffer(codes, dtype=np.uint16)
    return np.asarray(codes, dtype=np.int64)


def _answered(columns: dict) -> np.ndarray:
    """``answered`` as a boolean array."""
    methods, method_codes = columns["method"]
    statuses, status_codes = columns["status"]
    gets = np.array([m == "GET" for m in methods])
    good = np.array([s is not None and (200 <= s < 300 or s == 304) for s in statuses])
    return gets[_indexes(method_codes)] & good[_indexes(status_codes)]


def custom_events(db, site: str, lo: int, hi: int, unknown_bots: bool) -> list[Pageview]:
    """The site's custom events and engagements of [lo, hi) (ms) sent by people, as
    ``sessions.Pageview`` with an ``event`` (an interaction) or ``engaged`` (ms)."""
    return [Pageview(f"{doc['host'] or ''}\x00{doc['user_agent'] or ''}",
                     schema.epoch_ms(doc["time"]), doc["page"], views=0,
                     event=() if "engaged" in doc else raw.event_of(doc),
                     engaged=doc.get("engaged"))
            for doc in raw.between(db, site, schema.from_epoch_ms(lo), schema.from_epoch_ms(hi))
            if not is_bot_agent(doc["user_agent"], unknown_bots)]


def answered(columns: dict) -> list[bool]:
    """Per event of a log, whether it is a GET answered 2xx or 304."""
    methods, method_codes = columns["method"]
    statuses, status_codes = columns["status"]
    gets = [m == "GET" for m in methods]
    good = [s is not None and (200 <= s < 300 or s == 304) for s in statuses]
    return [gets[m] and good[s] for m, s in zip(method_codes, status_codes, strict=True)]


def backfilled(db, site: str, runs: list[Pageview], views: Iterable[tuple[int, str, int]],
               events: Sequence[Pageview] = ()) -> int:
    """Visits of history written without events (the load generator's past days):
    ``runs`` are whole UTC days' pageviews as runs (``Pageview.until``, ``views``: the
    work grows with visits, not hits), ``views`` their ``(quarter, page, pageviews)``
    cells, ``events`` their custom events (``Pageview.event``), which continue and
    un-bounce visits as live ones do; all is stored apart from what the events make
    (``backfilled``), so a later recompute of the same hours keeps it."""
    timeout = site_settings(db, site).visit_ms
    views = list(views)
    quarters, pages = tally(sessionize([*runs, *events], timeout), ())
    count_views(quarters, pages, views)
    if not quarters:
        return 0
    first = min(quarters) // store.DAY_MS * store.DAY_MS
    last = (max(quarters) // store.DAY_MS + 1) * store.DAY_MS
    parts = store.hour_parts(quarters, pages, range(first, last, HOUR_MS),
                             {**cells.backfilled_pageviews(views, runs),
                              **cells.tally(events)})
    days = store.write_hours(db, site, parts, backfilled=True)
    store.refresh_sums(db, site, days)
    return len(days)


def recent(db, site: str, now: dt.datetime, minutes: int) -> int:
    """Visits begun in [now - minutes, now], cut from the raw events (the stored visits
    trail them by a rollup run): the Live page's figure."""
    settings = site_settings(db, site)
    timeout = settings.visit_ms
    end = schema.epoch_ms(now) + 1
    since = end - 1 - minutes * MINUTE_MS
    views = pageviews(db, site, since - timeout, end, settings.unknown_bots)
    return sum(1 for visit in sessionize(views, timeout) if visit.start >= since)
