"""Reads of the dimension counters and visitor sketches: small functions returning
pandas DataFrames (or numbers), reading only pre-aggregated documents.

A range is cut into whole UTC months (``dims.monthly``), whole UTC days (``dims.daily``)
and the hours left at its edges (``dims.hourly``), so twelve months read about 14 + 48
documents. Visitors per value come from the site's daily value sketches (the whole UTC
days the range touches). One page's breakdown comes from raw events (``page_reads``),
and the frame's ``attrs["note"]`` says so.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter

import pandas as pd

from .. import validation
from ..stats.series import bucket_edges, series
from . import page_reads, sketches
from .classify import BOT
from .counters import DAILY, HOURLY, MONTHLY
from .encoding import DIMENSIONS, OTHER, escape, unescape
from .page_reads import active_visitors, count_events, events_breakdown, page_breakdown

HOUR, DAY = dt.timedelta(hours=1), dt.timedelta(days=1)
WHOLE = validation.WHOLE_SITE
COLUMNS = ["value", "hits", "visitors"]
__all__ = ["active_visitors", "bot_share", "breakdown", "filtered_series", "recent_breakdown",
           "top_not_found", "value_bot_share", "visitors", "visitors_series"]


class UnknownDimensionError(validation.InvalidRangeError):
    pass


def dimension(name) -> str:
    if name not in DIMENSIONS:
        raise UnknownDimensionError(
            f"unknown dimension {str(name)[:40]!r}: one of {', '.join(DIMENSIONS)}")
    return name


def _next_month(t: dt.datetime) -> dt.datetime:
    return t.replace(year=t.year + t.month // 12, month=t.month % 12 + 1)


def _floor(t: dt.datetime, unit: dt.timedelta) -> dt.datetime:
    t = t.astimezone(dt.UTC).replace(minute=0, second=0, microsecond=0)
    return t.replace(hour=0) if unit == DAY else t


def _ceil(t: dt.datetime, unit: dt.timedelta) -> dt.datetime:
    floor = _floor(t, unit)
    return floor if floor == t.astimezone(dt.UTC) else floor + unit


def pieces(start: dt.datetime, end: dt.datetime, hours: bool = True) -> dict[str, list]:
    """[start, end) widened to whole UTC hours (days if ``hours`` is false), as the
    months, days and hours whose documents cover it."""
    unit = HOUR if hours else DAY
    t, end = _floor(start, unit), _ceil(end, unit)
    out: dict[str, list] = {MONTHLY: [], DAILY: [], HOURLY: []}
    while t < end:
        if t.hour == 0 and t.day == 1 and _next_month(t) <= end:
            out[MONTHLY].append(t)
            t = _next_month(t)
        elif t.hour == 0 and t + DAY <= end:
            out[DAILY].append(t)
            t += DAY
        else:
            out[HOURLY].append(t)
            t += HOUR
    return out


def whole_hours(start, end, tz) -> tuple[dt.datetime, dt.datetime]:
    """The whole hours of ``tz`` that ``[start, end)`` overlaps, the dimensions' finest
    unit (checked)."""
    start, end = validation.time_range(start, end)
    zone, tick = validation.timezone(tz), dt.timedelta(microseconds=1)
    # Only the range's first and last hours of the zone matter (not every edge between).
    return (bucket_edges(start, start + tick, "hour", zone)[0],
            bucket_edges(end - tick, end, "hour", zone)[-1])


def _prepare(db, site, start, end, tz, page=None):
    """Validated site and page, and the range in whole hours of ``tz`` cut in pieces."""
    site = validation.site(site)
    page = WHOLE if page in (None, "", WHOLE) else validation.page(page)
    start, end = whole_hours(start, end, tz)
    return site, page, start, end, pieces(start, end)


def unsplit_bots(doc: dict) -> int:
    """Bot hits of a counter document that ``b`` does not hold (written before bots were
    counted apart): ``v.bot.bot`` beyond ``bh``."""
    return max(doc.get("v", {}).get("bot", {}).get(BOT, 0) - doc.get("bh", 0), 0)


def _counts(db, site: str, parts: dict, dim: str, humans: bool = False,
            bots: bool = False) -> tuple[Counter, int, int]:
    """Hits per value of ``dim`` (bots left out if ``humans``, bots alone if ``bots``),
    summed over the range's counter documents (by ``_id``); their hits; the bot hits
    that could not be told apart (counted as humans)."""
    counts: Counter = Counter()
    total = unsplit = 0
    split = humans or bots
    fields = _projection(f"v.{dim}", "hits", *((f"b.{dim}", "v.bot", "bh") if split
                                               else ()))
    for coll, dates in parts.items():
        if not dates:
            continue
        level = sketches.LEVELS[coll]
        ids = [sketches.bucket_id(site, date, level) for date in dates]
        for doc in db[coll].find({"_id": {"$in": ids}}, fields):
            total += doc.get("hits", 0)
            if not bots:
                for name, n in doc.get("v", {}).get(dim, {}).items():
                    counts[unescape(name)] += n
            if split:
                unsplit += unsplit_bots(doc)
                for name, n in doc.get("b", {}).get(dim, {}).items():
                    counts[unescape(name)] += n if bots else -n
    return counts, total, unsplit


def _projection(*paths: str) -> dict[str, int]:
    """The fields, leaving out any under another one (MongoDB refuses the collision of
    ``v.bot`` with ``v.bot.human``)."""
    return {p: 1 for p in paths
            if not any(p != q and p.startswith(q + ".") for q in paths)}


def unsplit_note(unsplit: int) -> str:
    return (f"{unsplit:,} bot hits stored before bots were counted apart are counted as "
            "humans" if unsplit else "")


def _days(parts: dict) -> list[dt.datetime]:
    """Every UTC day the parts touch (months and hours included)."""
    days = set(parts[DAILY])
    for month in parts[MONTHLY]:
        t = month
        while t < _next_month(month):
            days.add(t)
            t += DAY
    days.update(_floor(h, DAY) for h in parts[HOURLY])
    return sorted(days)


def _value_visitors(db, site: str, dim: str, parts: dict, humans: bool = False,
                    bots: bool = False) -> dict[str, int]:
    """Visitors per value: the union of the value sketches (humans' only if ``humans``,
    bots' only if ``bots``) of the range's months and of the whole UTC days it touches."""
    days = sorted(set(parts[DAILY]) | {_floor(h, DAY) for h in parts[HOURLY]})
    docs = (sketches.fetch(db, "month", site, parts[MONTHLY], dim)
            + sketches.fetch(db, "day", site, days, dim))
    groups: dict[str, list] = {}
    for doc in docs:
        for item in doc.get("values", ()):
            if not (humans and item.get("b")) and not (bots and not item.get("b")):
                groups.setdefault(item["v"], []).append(sketches.load(item["s"]))
    return {value: sketches.estimate(group, sketches.LG_K_VALUE)
            for value, group in groups.items()}


def breakdown(db, site: str, by: str, start: dt.datetime, end: dt.datetime, tz="UTC",
              page: str | None = None, n: int | None = None,
              humans: bool = False, bots: bool = False) -> pd.DataFrame:
    """Hits and visitors per value of dimension ``by`` over [start, end) (whole hours of
    ``tz``), most hits first; ``(other)`` (values past a document's cap) last. Bots left
    out if ``humans`` (``attrs["unsplit"]``: old bot hits that could not be), the bots'
    hits alone if ``bots`` (old ones not told apart are missing: ``unsplit``)."""
    dim = dimension(by)
    site, page, start, end, parts = _prepare(db, site, start, end, tz, page)
    if page != WHOLE:
        frame = page_breakdown(db, site, page, dim, start, end, humans=humans)
        return frame.head(max(int(n), 0)) if n is not None else frame
    counts, _, unsplit = _counts(db, site, parts, dim, humans, bots)
    visitors = _value_visitors(db, site, dim, parts, humans, bots)
    # A value's sketches cover whole UTC days, its hits the range's hours: in a range cut
    # within a day the day's visitors may outnumber the range's hits, which bound them.
    rows = [{"value": v, "hits": int(h),
             "visitors": None if visitors.get(v) is None else min(visitors[v], int(h))}
            for v, h in counts.items() if h > 0]
    rows.sort(key=lambda r: (r["value"] == OTHER, -r["hits"], r["value"]))
    if n is not None:
        rows = rows[: max(int(n), 0)]
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame["hits"] = frame["hits"].astype("int64")
    frame["visitors"] = pd.to_numeric(frame["visitors"]).astype("Int64")
    frame.attrs["note"] = unsplit_note(unsplit)
    frame.attrs["unsplit"] = unsplit
    return frame


# The share of a window's hits its raw events must hold for Live to read them (a
# backfilled hour has counters and no events).
COVERED = 0.9


def recent_breakdown(db, site: str, by: str, start, end, n: int | None = None,
                     humans: bool = False) -> pd.DataFrame:
    """Hits and visitors per value of ``by`` over exactly [start, end) (Live's last
    hour), from the raw events of that window: a value's visitors are those of the same
    hits (value sketches are per UTC day at the finest, so ``breakdown`` would give the
    day's visitors beside the hour's hits). Without events in the window (a source that
    writes none: ``--no-events``; a backfill), with events for less than ``COVERED`` of
    its hits, or with more than ``page_reads.MAX_SCANNED`` (a busy site: the read is
    refreshed every few seconds), the counters give the hits of its whole hours, and no
    visitors; ``attrs["note"]`` says so."""
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
        frame = breakdown(db, site, dim, start, end, humans=humans)
        frame["visitors"] = pd.array([None] * len(frame), dtype="Int64")
        why = (f"over {page_reads.MAX_SCANNED:,} hits in this hour, too many to read as "
               "raw events every few seconds" if events > page_reads.MAX_SCANNED else
               f"raw events kept for only {events:,} of its {hits:,} hits" if events else
               "no raw events kept for this hour")
        frame.attrs["note"] = (f"{why}: hits from the counters' whole hours, visitors "
                               "unknown") if len(frame) else ""
    return frame.head(max(int(n), 0)) if n is not None else frame


def top_not_found(db, site: str, start, end, tz="UTC", n: int = 10,
                  humans: bool = False) -> pd.DataFrame:
    """The most requested paths answered 404: columns path, hits."""
    frame = breakdown(db, site, "notfound", start, end, tz, n=n, humans=humans)
    return frame.rename(columns={"value": "path"})[["path", "hits"]]


def bot_share(db, site: str, start, end, tz="UTC", page: str | None = None) -> float:
    """Bots' share of all hits in the range (0 when there were none)."""
    frame = breakdown(db, site, "bot", start, end, tz, page)
    total = int(frame["hits"].sum())
    bots = int(frame.loc[frame["value"] == "bot", "hits"].sum())
    return bots / total if total else 0.0


def value_bot_share(db, site: str, by: str, value: str, start, end, tz="UTC") -> float:
    """Bots' share of the hits whose ``by`` is ``value`` (e.g. referrer = news.example),
    from the counters alone (``b`` counts the bots by the same values): any range."""
    dim = dimension(by)
    site, _, _, _, parts = _prepare(db, site, start, end, tz)
    name = escape(str(value))
    fields = _projection(f"v.{dim}.{name}", f"b.{dim}.{name}")
    hits = bots = 0
    for coll, dates in parts.items():
        if dates:
            ids = [sketches.bucket_id(site, date, sketches.LEVELS[coll]) for date in dates]
            for doc in db[coll].find({"_id": {"$in": ids}}, fields):
                hits += doc.get("v", {}).get(dim, {}).get(name, 0)
                bots += doc.get("b", {}).get(dim, {}).get(name, 0)
    return bots / hits if hits else 0.0


def visitors(db, site: str, start, end, tz="UTC", humans: bool = False) -> int:
    """Distinct (address, agent) pairs in the range, bots left out if ``humans``: the
    union of its sketches (months, days, and hours at its edges)."""
    site, _, _, _, parts = _prepare(db, site, start, end, tz)
    docs = (sketches.fetch(db, "month", site, parts[MONTHLY])
            + sketches.fetch(db, "day", site, parts[DAILY])
            + sketches.fetch(db, "hour", site, parts[HOURLY]))
    return sketches.estimate(sketches.whole(doc, humans) for doc in docs)


def _series_edges(site: str, start, end, granularity: str, tz: str, what: str):
    """The checked site, the zone and the bucket edges of an hourly or daily series."""
    if granularity not in ("hour", "day"):
        raise validation.InvalidRangeError(f"{what} per hour or per day")
    site = validation.site(site)
    start, end = validation.time_range(start, end)
    zone = validation.timezone(tz)
    return site, zone, bucket_edges(start, end, granularity, zone)


def visitors_series(db, site: str, start, end, granularity: str = "day",
                    tz="UTC") -> pd.DataFrame:
    """Visitors per hour or day of ``tz`` (index ``time``, column ``visitors``); each
    bucket is the union of its own sketches (its UTC day, else its hours)."""
    site, zone, edges = _series_edges(site, start, end, granularity, tz, "visitors come")
    loaded: dict[tuple[str, dt.datetime], list] = {}
    wanted = {"hour": set(), "day": set()}
    for a, b in zip(edges, edges[1:], strict=False):
        bucket = pieces(a, b)
        wanted["day"].update(bucket[DAILY])
        wanted["hour"].update(bucket[HOURLY])
    for level, dates in wanted.items():
        for doc in sketches.fetch(db, level, site, sorted(dates)):
            loaded.setdefault((level, validation.stored_time(doc["metadata"]["date"])), []).append(
                sketches.whole(doc))
    rows = []
    for a, b in zip(edges, edges[1:], strict=False):
        bucket = pieces(a, b)
        found = [s for d in bucket[DAILY] for s in loaded.get(("day", d), [])]
        found += [s for h in bucket[HOURLY] for s in loaded.get(("hour", h), [])]
        rows.append((a.astimezone(zone), sketches.estimate(found) if found else 0))
    frame = pd.DataFrame(rows, columns=["time", "visitors"]).set_index("time")
    frame["visitors"] = frame["visitors"].astype("int64")
    return frame


def _hours(start: dt.datetime, end: dt.datetime) -> list[dt.datetime]:
    t, out = _floor(start, HOUR), []
    while t < end:
        out.append(t)
        t += HOUR
    return out


def filtered_series(db, site: str, by: str, value: str, start, end,
                    granularity: str = "day", tz="UTC", humans: bool = False) -> pd.DataFrame:
    """Hits per hour or day of ``tz`` of the hits whose ``by`` is ``value`` (e.g.
    referrer = news.example) in [start, end) to the hour, from the counters alone: index
    ``time``, column ``hits``; bots left out if ``humans`` (``attrs["unsplit"]``: old bot
    hits that could not be)."""
    dim = dimension(by)
    site, zone, edges = _series_edges(site, start, end, granularity, tz,
                                     "a filtered series comes")
    name = escape(str(value))
    fields = _projection(f"v.{dim}.{name}", "metadata.date",
                         *((f"b.{dim}.{name}", "v.bot", "bh") if humans else ()))
    found: dict[tuple[str, dt.datetime], int] = {}
    unsplit = 0
    # Each bucket's hits of [start, end) to the hour (the counters' finest): a bucket the
    # range cuts (today so far; a week ago until the same hour) reads its hours.
    first, last = _floor(validation.timestamp(start), HOUR), _ceil(validation.timestamp(end), HOUR)
    spans = [(max(a, first), min(b, last)) for a, b in zip(edges, edges[1:], strict=False)]
    by_day = granularity == "day" and not any(e.hour or e.minute for e in edges)
    whole = [by_day and span == (a, b)
             for span, a, b in zip(spans, edges, edges[1:], strict=False)]
    wanted = {MONTHLY: [], HOURLY: [h for (a, b), w in zip(spans, whole, strict=True)
                                    if not w for h in _hours(a, b)],
              DAILY: [d for (a, b), w in zip(spans, whole, strict=True)
                      if w for d in _days(pieces(a, b, hours=False))]}
    for coll, dates in wanted.items():
        if dates:
            ids = [sketches.bucket_id(site, date, sketches.LEVELS[coll]) for date in dates]
            for doc in db[coll].find({"_id": {"$in": ids}}, fields):
                n = doc.get("v", {}).get(dim, {}).get(name, 0)
                if humans:
                    n -= doc.get("b", {}).get(dim, {}).get(name, 0)
                    unsplit += unsplit_bots(doc)
                found[(coll, validation.stored_time(doc["metadata"]["date"]))] = n
    rows = []
    for (a, b), edge, w in zip(spans, edges, whole, strict=False):
        if w:
            hits = sum(found.get((DAILY, d), 0) for d in _days(pieces(a, b, hours=False)))
        else:
            hits = sum(found.get((HOURLY, h), 0) for h in _hours(a, b))
        rows.append((edge.astimezone(zone), hits))
    frame = pd.DataFrame(rows, columns=["time", "hits"]).set_index("time")
    frame["hits"] = frame["hits"].astype("int64")
    frame.attrs["unsplit"] = unsplit
    return frame
