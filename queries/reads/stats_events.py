"""The Stats API's filters counted from raw events: every distinct request of the range
classified once (``filtered.matching_requests``), tested against the filter tree
(``matches`` by RE2, linear whatever the pattern), and its hits and visitors summed per
value of the dimension asked for. Raw events are kept ``events_ttl_days`` after they
are stored: a range holding hours whose events are gone is refused, naming the limit."""

from __future__ import annotations

import datetime as dt
from collections import Counter

import re2

from ..dimensions.spans import floor_hour
from ..errors import InvalidRangeError
from ..events.expired import COLLECTION as EXPIRED
from .filtered import PAGEVIEW, matching_requests
from .stats_query import Filter, Match, StatsQuery


class BeyondRetentionError(InvalidRangeError):
    pass


def check_kept(db, q: StatsQuery, events_ttl_days: int) -> None:
    gone = db[EXPIRED].find_one({"site": q.site,
                                 "hour": {"$gte": floor_hour(q.start), "$lt": q.end}},
                                {"hour": 1}, sort=[("hour", -1)])
    if gone is not None:
        last = gone["hour"].replace(tzinfo=dt.UTC) + dt.timedelta(hours=1)
        raise BeyondRetentionError(
            "these filters are counted from raw events, which are kept "
            f"{events_ttl_days} days after they are stored (HITBOARD_EVENTS_TTL_DAYS); "
            f"this range holds hours whose events are gone, up to {last.isoformat()}: "
            "ask for a later range, or one `is` filter on one value (the counters "
            "answer it over any range)")


def from_events(db, q: StatsQuery, start: dt.datetime, end: dt.datetime,
                by: tuple[str, ...] = ()) -> list[tuple[tuple, dict]]:
    """Hits, visitors and pageviews (people's, as the visits count them) of the raw
    events of [start, end) meeting the filters, per values of the counted dimensions
    ``by`` (none: one total row, none when nothing met them), most hits first."""
    hits: Counter = Counter()
    views: Counter = Counter()
    people: dict[tuple, set] = {}
    wanted = "pageviews" in q.metrics
    for values, visitor, count in matching_requests(db, q.site, start, end, q.humans,
                                                    pageviews=wanted):
        if not all(meets(f, values) for f in q.filters):
            continue
        key = tuple(values.get(name, "") for name in by)
        hits[key] += count
        if values.get(PAGEVIEW):
            views[key] += count
        people.setdefault(key, set()).add(visitor)
    order = sorted(hits, key=lambda k: (-hits[k], tuple(map(str, k))))
    return [(k, {"hits": hits[k], "visitors": len(people[k]), "pageviews": views[k]})
            for k in order]


def meets(node: Filter, values: dict) -> bool:
    """Whether ``values`` (a dimension's counted name -> its value) meet ``node``."""
    if isinstance(node, Match):
        value = str(values.get(node.counted, ""))
        return _matches(node, value)
    if node.operator == "and":
        return all(meets(c, values) for c in node.clauses)
    if node.operator == "or":
        return any(meets(c, values) for c in node.clauses)
    return not meets(node.clauses[0], values)


def _matches(node: Match, value: str) -> bool:
    base, negated = node.operator.removesuffix("_not"), node.operator.endswith("_not")
    if base == "is":
        met = value in node.values
    elif base == "contains":
        met = any(wanted in value for wanted in node.values)
    else:
        met = any(pattern(wanted).search(value) is not None for wanted in node.values)
    return met != negated


_PATTERNS: dict[str, object] = {}


def pattern(text: str):
    """``text`` compiled by RE2 (linear time whatever the pattern: a query cannot stall a
    server), once per process; an invalid one is a clear error."""
    found = _PATTERNS.get(text)
    if found is None:
        options = re2.Options()
        options.log_errors = False
        try:
            found = re2.compile(text, options)
        except re2.error:
            raise InvalidRangeError(f"invalid regular expression {text[:100]!r} (RE2 "
                                    "syntax)") from None
        if len(_PATTERNS) < 1024:
            _PATTERNS[text] = found
    return found
