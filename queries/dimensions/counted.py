"""Hits per value of a dimension over a :class:`~.spans.Cover`: its whole UTC hours from
the counter documents, the parts of the hours it cuts from the raw events.

The whole hours are cut into whole UTC months (``dims.monthly``), whole UTC days
(``dims.daily``) and the hours left at their edges (``dims.hourly``), so twelve months
read about 14 + 48 documents, each by ``_id``.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter

from . import sketches
from .classify import BOT
from .counters import DAILY, HOURLY, MONTHLY
from .encoding import unescape
from .page_reads import event_values
from .spans import DAY, HOUR, Cover, ceil_hour, floor_hour


def next_month(t: dt.datetime) -> dt.datetime:
    return t.replace(year=t.year + t.month // 12, month=t.month % 12 + 1)


def pieces(start: dt.datetime, end: dt.datetime, hours: bool = True) -> dict[str, list]:
    """[start, end) widened to whole UTC hours (days if ``hours`` is false), as the
    months, days and hours whose documents cover it."""
    t, end = floor_hour(start), ceil_hour(end)
    if not hours:
        t, end = t.replace(hour=0), _ceil_day(end)
    out: dict[str, list] = {MONTHLY: [], DAILY: [], HOURLY: []}
    while t < end:
        if t.hour == 0 and t.day == 1 and next_month(t) <= end:
            out[MONTHLY].append(t)
            t = next_month(t)
        elif t.hour == 0 and t + DAY <= end:
            out[DAILY].append(t)
            t += DAY
        else:
            out[HOURLY].append(t)
            t += HOUR
    return out


def _ceil_day(t: dt.datetime) -> dt.datetime:
    floor = t.replace(hour=0)
    return floor if floor == t else floor + DAY


def days_of(parts: dict) -> list[dt.datetime]:
    """Every UTC day the parts touch (months and hours included)."""
    days = set(parts[DAILY])
    for month in parts[MONTHLY]:
        t = month
        while t < next_month(month):
            days.add(t)
            t += DAY
    days.update(h.replace(hour=0) for h in parts[HOURLY])
    return sorted(days)


def unsplit_bots(doc: dict) -> int:
    """Bot hits of a counter document that ``b`` does not hold (written before bots were
    counted apart): ``v.bot.bot`` beyond ``bh``."""
    return max(doc.get("v", {}).get("bot", {}).get(BOT, 0) - doc.get("bh", 0), 0)


def projection(*paths: str) -> dict[str, int]:
    """The fields, leaving out any under another one (MongoDB refuses the collision of
    ``v.bot`` with ``v.bot.human``)."""
    return {p: 1 for p in paths
            if not any(p != q and p.startswith(q + ".") for q in paths)}


def counter_values(db, site: str, parts: dict, dim: str, humans: bool = False,
                   bots: bool = False) -> tuple[Counter, int, int]:
    """Hits per value of ``dim`` (bots left out if ``humans``, bots alone if ``bots``),
    summed over the parts' counter documents (by ``_id``); their hits; the bot hits
    that could not be told apart (counted as humans)."""
    counts: Counter = Counter()
    total = unsplit = 0
    split = humans or bots
    fields = projection(f"v.{dim}", "hits", *((f"b.{dim}", "v.bot", "bh") if split
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


def cover_values(db, site: str, dim: str, cover: Cover, humans: bool = False,
                 bots: bool = False) -> tuple[Counter, int, dict[str, set]]:
    """Hits per value of ``dim`` over ``cover``: its whole hours from the counters, its
    cut parts from the raw events; the old bot hits counted as humans (``unsplit``); the
    visitors of each value among those raw events."""
    counts, _, unsplit = counter_values(db, site, pieces(*cover.hours), dim, humans, bots)
    people: dict[str, set] = {}
    for start, end in cover.events:
        for value, (n, seen) in event_values(db, site, dim, start, end, humans,
                                             bots=bots).items():
            counts[value] += n
            people.setdefault(value, set()).update(seen)
    return counts, unsplit, people
