"""Distinct visitors over a range: the union of the sketches of its buckets, never a sum.

The whole site has a sketch per UTC hour, day and month, so any range of whole hours
reads a few of them; the parts of hours a range cuts come from the raw events (see
``spans``), sketched the same way (a visitor is the same string), so they join the
union. A dimension's values have sketches per UTC day and month only: the hours of a
range that are not whole UTC days (its first and last day, unless one is today) come
from the raw events too, within ``spans.EVENTS_BUDGET``; without them the whole days
stand in, each value's visitors capped by its hits, and the result says it is not
exact. A visitor is one (address, user agent) pair.

A count from sketches comes with its error (``sketches.Estimate``: 0 when exact). A
value's sketches are smaller than the whole site's, so where both answer the same
question they are made to agree: a value holding every hit of the range has the site's
visitors, and the values of a dimension that each visitor has one of (a browser, a
country: ``PER_VISITOR``) share the site's visitors between them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import NamedTuple

import pandas as pd

from .. import validation
from . import sketches
from .counted import pieces
from .counters import DAILY, HOURLY, MONTHLY
from .page_reads import event_values
from .spans import (
    DAY,
    EVENTS_BUDGET,
    Cover,
    Span,
    bucket_covers,
    complete_hours,
    cover,
    floor_hour,
)

# Dimensions whose value is the visitor's own (its agent's or its address's): every
# visitor has exactly one, so a range's values share out its visitors.
PER_VISITOR = frozenset(("browser", "os", "device", "bot", "country"))
# Dimensions only some hits have a value of (the 404s' paths): a value holding every hit
# of the dimension does not hold every hit of the range.
PARTIAL = frozenset(("notfound",))


class Visitors(NamedTuple):
    """Distinct visitors of a range, and whether they are exactly its own (else those of
    ``counted``, the nearest whole hours or days); ``error``: the sketches' (see
    ``sketches.Estimate``), 0 when the count is exact."""

    n: int
    exact: bool
    counted: Span
    error: int = 0


def _sketch_of(people: Iterable[str], lg_k: int = sketches.LG_K):
    sketch = sketches.new(lg_k)
    for visitor in people:
        sketch.update(visitor)
    return sketch


def _site_docs(db, site: str, parts: dict) -> list[dict]:
    return (sketches.fetch(db, "month", site, parts[MONTHLY])
            + sketches.fetch(db, "day", site, parts[DAILY])
            + sketches.fetch(db, "hour", site, parts[HOURLY]))


def visitors(db, site: str, start, end, humans: bool = False,
             now: dt.datetime | None = None) -> Visitors:
    """Distinct visitors of [start, end), bots left out if ``humans``: the sketches of
    its whole UTC hours and the raw events of the hours it cuts."""
    site = validation.site(site)
    start, end = validation.time_range(start, end)
    found = cover(db, site, start, end, now)
    n, error = visitors_over(db, site, found, humans)
    return Visitors(n, found.exact, found.counted, error)


def visitors_over(db, site: str, found: Cover, humans: bool = False,
                  cut: Iterable[str] | None = None) -> sketches.Estimate:
    """The whole site's distinct visitors over a cover; ``cut``: the visitors of the
    parts of hours it cuts, when they were read from the raw events already."""
    parts = [sketches.whole(doc, humans) for doc in _site_docs(db, site, pieces(*found.hours))]
    if cut is not None:
        parts.append(_sketch_of(cut))
    else:
        for start, end in found.events:
            people = event_values(db, site, "bot", start, end, humans)
            parts.append(_sketch_of(v for _, seen in people.values() for v in seen))
    return sketches.count(parts)


def value_visitors(db, site: str, dim: str, found: Cover, hits: dict[str, int],
                   event_people: dict[str, set], humans: bool = False, bots: bool = False,
                   now: dt.datetime | None = None, budget: int = EVENTS_BUDGET
                   ) -> tuple[dict[str, sketches.Estimate], bool]:
    """Visitors per value of ``dim`` over ``found`` (whose hits per value are ``hits``;
    ``event_people`` the visitors of its cut parts, from raw events), and whether they
    are exact: whole UTC days and months from the value sketches, the hours of other
    days from the raw events; made to agree with the site's visitors (see the module
    doc)."""
    groups, exact = _value_sketches(db, site, dim, found, event_people, humans, bots, now,
                                    budget)
    counted = {value: sketches.count(group, sketches.LG_K_VALUE)
               for value, group in groups.items()}
    if not exact:       # a day's visitors may outnumber the range's hits, which bound them
        counted = {v: e._replace(n=min(e.n, hits.get(v, 0))) for v, e in counted.items()}
    if not bots and sum(hits.values()):   # the site's sketches: everyone, humans; no bots
        site_wide = visitors_over(db, site, found, humans, cut=set().union(
            *event_people.values()))
        counted = _agreeing(dim, counted, hits, site_wide)
    return counted, exact and found.exact


def _agreeing(dim: str, counted: dict[str, sketches.Estimate], hits: dict[str, int],
              site_wide: sketches.Estimate) -> dict[str, sketches.Estimate]:
    """The values' visitors made to agree with the whole site's over the same cover: an
    estimated value has at most them; a value holding every hit has them; the values
    of a ``PER_VISITOR`` dimension share them (the estimated values scaled to what the
    exact ones leave, by largest remainder, none past its hits)."""
    counted = {v: e._replace(n=min(e.n, site_wide.n)) if e.error or not site_wide.error
               else e for v, e in counted.items()}      # an exact count stays as it is
    total = sum(hits.values())
    every = [value for value, n in hits.items() if n and n == total and dim not in PARTIAL]
    if every:
        return {**counted, **{value: site_wide for value in every}}
    if dim not in PER_VISITOR:
        return counted
    loose = {v: e for v, e in counted.items() if e.error and hits.get(v, 0)}
    left = site_wide.n - sum(e.n for v, e in counted.items() if v not in loose)
    held = sum(e.n for e in loose.values())
    if not loose or left <= 0 or not held:
        return counted
    shares = {v: e.n * left / held for v, e in loose.items()}
    whole = {v: int(share) for v, share in shares.items()}
    for v in sorted(shares, key=lambda v: (whole[v] - shares[v], v))[:left - sum(whole.values())]:
        whole[v] += 1
    return {**counted, **{v: e._replace(n=min(whole[v], hits[v])) for v, e in loose.items()}}


def _value_sketches(db, site: str, dim: str, found: Cover, event_people: dict[str, set],
                    humans: bool, bots: bool, now: dt.datetime | None, budget: int
                    ) -> tuple[dict[str, list], bool]:
    """Per value of ``dim``, the sketches whose union is its visitors over ``found``, and
    whether they are the range's own (else its whole days')."""
    live = floor_hour(now or dt.datetime.now(dt.UTC))
    days, rest = _days_and_rest(found.hours, live)
    hours = [h for a, b in rest for h in _hours(a, b)]
    exact = not hours or complete_hours(db, site, hours, budget, live) >= set(hours)
    if not exact:                   # the whole days around stand in for those hours
        days = pieces(found.hours[0], found.hours[1], hours=False)
        rest = []
    docs = (sketches.fetch(db, "month", site, days[MONTHLY], dim)
            + sketches.fetch(db, "day", site, days[DAILY], dim))
    groups: dict[str, list] = {}
    for doc in docs:
        for item in doc.get("values", ()):
            if not (humans and item.get("b")) and not (bots and not item.get("b")):
                groups.setdefault(item["v"], []).append(sketches.load(item["s"]))
    people = {value: set(seen) for value, seen in event_people.items()}
    for start, end in rest:
        for value, (_, seen) in event_values(db, site, dim, start, end, humans,
                                             bots=bots).items():
            people.setdefault(value, set()).update(seen)
    for value, seen in people.items():
        groups.setdefault(value, []).append(_sketch_of(seen, sketches.LG_K_VALUE))
    return groups, exact


def _days_and_rest(hours: Span, live: dt.datetime) -> tuple[dict, list[Span]]:
    """The whole UTC days (and months) of ``hours``, and the hours left at either side.
    A last day that is today counts as its day so far: nothing later is stored."""
    lo, hi = hours
    first, last = _ceil_day(lo), hi.replace(hour=0)
    if first > last:                                  # within one day, cut at both ends
        return pieces(lo, lo), [(lo, hi)] if lo < hi else []
    today = hi > live and last < hi
    rest = [(lo, first)] if lo < first else []
    if last < hi and not today:
        rest.append((last, hi))
    end = last + DAY if today else last
    return (pieces(first, end, hours=False) if first < end else pieces(lo, lo)), rest


def _ceil_day(t: dt.datetime) -> dt.datetime:
    floor = t.replace(hour=0)
    return floor if floor == t else floor + DAY


def _hours(start: dt.datetime, end: dt.datetime) -> list[dt.datetime]:
    t, out = floor_hour(start), []
    while t < end:
        out.append(t)
        t += dt.timedelta(hours=1)
    return out


def visitors_series(db, site: str, start, end, granularity: str = "day",
                    tz="UTC", humans: bool = False,
                    now: dt.datetime | None = None) -> pd.DataFrame:
    """Visitors per hour or day of ``tz`` (index ``time``, column ``visitors``): each
    bucket the union of its own sketches and raw events (:func:`visitors`);
    ``attrs["exact"]`` false when a bucket is counted over the nearest whole hours."""
    if granularity not in ("hour", "day"):
        raise validation.InvalidRangeError("visitors come per hour or per day")
    site = validation.site(site)
    edges, found = bucket_covers(db, site, start, end, granularity, tz, now)
    rows = [(a, visitors_over(db, site, c, humans).n if c.hours[0] < c.hours[1]
             or c.events else 0) for a, c in zip(edges, found, strict=False)]
    frame = pd.DataFrame(rows, columns=["time", "visitors"]).set_index("time")
    frame["visitors"] = frame["visitors"].astype("int64")
    frame.attrs["exact"] = all(c.exact for c in found)
    return frame
