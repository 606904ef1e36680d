"""Brute-force answers the tests hold the store to: counted hit by hit, in plain Python."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from zoneinfo import ZoneInfo

from queries.stats import schema
from queries.validation import WHOLE_SITE

STATS = (schema.DAILY, schema.MONTHLY)


def clear(db) -> None:
    for name in STATS:
        db[name].delete_many({})


def stored(db) -> dict[str, list[dict]]:
    """Every stats document, sorted by ``_id``, without the recorder's bookkeeping."""
    return {name: sorted(({k: v for k, v in doc.items() if k != schema.FLUSHES}
                          for doc in db[name].find()), key=lambda d: d["_id"])
            for name in STATS}


def counters(db) -> dict[str, dict[str, dict]]:
    """Per collection, ``_id`` -> the document's counters with zeros dropped (so a
    pre-allocated document equals one that was never pre-allocated)."""
    def nonzero(value):
        if isinstance(value, dict):
            kept = {k: nonzero(v) for k, v in value.items()}
            return {k: v for k, v in kept.items() if v not in (0, {})}
        return value

    return {name: {doc["_id"]: nonzero({k: v for k, v in doc.items()
                                         if k not in ("_id", "metadata", schema.FLUSHES)})
                   for doc in db[name].find()}
            for name in STATS}


def expected_counters(hits) -> dict[str, dict[str, dict]]:
    """What ``counters`` must read after ``hits`` = [(ts, site, page, n)], pages already
    normalised (leading "/")."""
    out: dict[str, dict[str, dict]] = {name: {} for name in STATS}
    for ts, site, page, n in hits:
        ts = ts.astimezone(dt.UTC)
        for target in {page, WHOLE_SITE}:
            day = out[schema.DAILY].setdefault(
                schema.daily_id(schema.day_start(ts), site, target),
                {"daily": 0, "hourly": {}, "minute": {}})
            day["daily"] += n
            hour = str(ts.hour)
            day["hourly"][hour] = day["hourly"].get(hour, 0) + n
            minutes = day["minute"].setdefault(hour, {})
            minutes[str(ts.minute)] = minutes.get(str(ts.minute), 0) + n
            month = out[schema.MONTHLY].setdefault(
                schema.monthly_id(schema.month_start(ts), site, target),
                {"monthly": 0, "daily": {}})
            month["monthly"] += n
            month["daily"][str(ts.day)] = month["daily"].get(str(ts.day), 0) + n
    return out


def floor_local(ts: dt.datetime, granularity: str, zone: ZoneInfo) -> dt.datetime:
    """The start of the local bucket holding ``ts``, as a UTC instant. Works on local
    wall time and keeps ``fold``, so the repeated hour of a DST change stays two hours."""
    local = ts.astimezone(zone)
    if granularity == "minute":
        local = local.replace(second=0, microsecond=0)
    elif granularity == "hour":
        local = local.replace(minute=0, second=0, microsecond=0)
    else:
        local = local.replace(hour=0, minute=0, second=0, microsecond=0, fold=0)
    return local.astimezone(dt.UTC)


def expected_series(hits, site, pages, granularity, start, end, zone, step_minutes=15):
    """(bucket starts, {(bucket, page): hits}) for ``queries.series``: buckets are the
    local buckets met walking [floor(start), end) in ``step_minutes`` (a divisor of every
    zone offset tested), holding the hits of [start, end) to the minute
    (``minute_window``); page "*" counts the whole site."""
    lo, hi = minute_window(start, end)
    first = floor_local(start, granularity, zone)
    step = dt.timedelta(minutes=1 if granularity == "minute" else step_minutes)
    buckets, cursor = set(), first
    while cursor < end:
        buckets.add(floor_local(cursor, granularity, zone))
        cursor += step
    counts: Counter = Counter()
    for ts, hit_site, page, n in hits:
        bucket = floor_local(ts, granularity, zone)
        if (hit_site != site or bucket not in buckets
                or not lo <= ts.replace(second=0, microsecond=0) < hi):
            continue
        for column in pages:
            if column in (page, WHOLE_SITE):
                counts[(bucket, column)] += n
    return sorted(buckets), counts


def minute_window(start, end) -> tuple[dt.datetime, dt.datetime]:
    """[start, end) to the minute, as the counters hold it: ``start`` floored, ``end``
    raised to a whole minute."""
    first = start.replace(second=0, microsecond=0)
    last = end.replace(second=0, microsecond=0)
    return first, (last + dt.timedelta(minutes=1) if last < end else last)


def expected_top(hits, site, start, end) -> Counter:
    """Hits per page over [start, end) to the minute (``minute_window``)."""
    first, last = minute_window(start, end)
    totals: Counter = Counter()
    for ts, hit_site, page, n in hits:
        if hit_site == site and first <= ts.replace(second=0, microsecond=0) < last:
            totals[page] += n
    return totals
