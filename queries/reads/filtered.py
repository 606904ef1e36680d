"""Every panel of the History page under conditions (``referrer = news.example``, ``page
= /a``, both), from raw events: the counters hold each dimension alone, so "the browsers
of the hits from news.example" (two dimensions) can only be counted from the events still
kept (``HITBOARD_EVENTS_TTL_DAYS`` after ingestion). One grouped read serves every panel:
events are grouped by what classification needs (``reads.grouped``), the groups a
condition on one field rules out are dropped first, the others classified here (cached)
and counted per dimension, so the work grows with distinct requests, not hits. The chart
of a combination no counter holds (a page and a referrer) is counted the same way, per
bucket.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import pandas as pd

from .. import validation
from ..dimensions.assets import page_of
from ..dimensions.classify import BOT, classify
from ..dimensions.reads import dimension
from ..events import reads
from ..stats.series import bucket_edges
from ..stats.sites import site_settings
from .query import PAGE, Condition

COLUMNS = ["value", "hits", "visitors"]
PAGEVIEW = "pageview"


@dataclass
class Filtered:
    """The filtered hits' panels: ``panels[dim]`` has columns value, hits, visitors (exact),
    most hits first; ``hits`` and ``visitors`` are the filtered totals."""

    panels: dict[str, pd.DataFrame] = field(default_factory=dict)
    hits: int = 0
    visitors: int = 0
    note: str = ""


def filtered_breakdowns(db, site: str, by: str, value: str, start: dt.datetime,
                        end: dt.datetime, dims: Sequence[str], humans_only: bool = True,
                        n: int = 10) -> Filtered:
    """Hits and visitors per value of each of ``dims`` (and ``"page"``) among the events
    of [start, end) whose ``by`` is ``value``; bots left out when ``humans_only``."""
    return matching_breakdowns(db, site, (Condition(dimension(by), (value,)),), start, end,
                               dims, humans_only, n)


def matching_breakdowns(db, site: str, conditions: Sequence[Condition], start: dt.datetime,
                        end: dt.datetime, dims: Sequence[str], humans_only: bool = True,
                        n: int = 10) -> Filtered:
    """Hits and visitors per value of each of ``dims`` (and ``"page"``) among the events
    of [start, end) that meet every one of ``conditions`` (a page: its path is one of the
    values; a dimension: its value is); bots left out when ``humans_only``."""
    wanted = {PAGE} | {dimension(d) for d in dims if d != PAGE}
    hits: dict[str, Counter] = {d: Counter() for d in wanted}
    people: dict[str, dict[str, set]] = {d: {} for d in wanted}
    everyone: set = set()
    total = 0
    for values, visitor, count in _matching(db, site, conditions, start, end, humans_only):
        total += count
        everyone.add(visitor)
        for name in wanted:
            if name in values:
                hits[name][values[name]] += count
                people[name].setdefault(values[name], set()).add(visitor)
    shown = " and ".join(c.label for c in conditions)
    note = (f"{shown}: counted from raw events, kept for the "
            "events retention (the Data page says how long); older hits are not included")
    return Filtered({d: _frame(hits[d], people[d], n) for d in wanted}, total,
                    len(everyone), note)


def matching_series(db, site: str, conditions: Sequence[Condition], start: dt.datetime,
                    end: dt.datetime, granularity: str, tz: str = "UTC",
                    humans_only: bool = True) -> pd.DataFrame:
    """Hits per bucket of ``tz`` (index ``time``, column ``hits``) of the events of
    [start, end) that meet every one of ``conditions``: a combination no counter holds
    (a page and a referrer), within the events' retention."""
    zone = validation.timezone(tz)
    start, end = validation.time_range(start, end)
    edges = bucket_edges(start, end, granularity, zone)
    hits = []
    for a, b in zip(edges, edges[1:], strict=False):
        a, b = max(a, start), min(b, end)
        hits.append(sum(count for _, _, count in _matching(db, site, conditions, a, b,
                                                            humans_only)) if a < b else 0)
    index = pd.DatetimeIndex(edges[:-1]).tz_convert(zone).rename("time")
    return pd.DataFrame({"hits": pd.array(hits, dtype="int64")}, index=index)


def matching_requests(db, site: str, start: dt.datetime, end: dt.datetime,
                      humans_only: bool = True, pageviews: bool = False
                      ) -> Iterator[tuple[dict, str, int]]:
    """``(values, visitor, hits)`` per distinct request of [start, end): every
    dimension's value and the ``page``, for a test no :class:`Condition` expresses;
    with ``pageviews``, also ``PAGEVIEW``: whether its hits are pageviews."""
    return _matching(db, site, (), start, end, humans_only, pageviews)


def _matching(db, site: str, conditions: Sequence[Condition], start: dt.datetime,
              end: dt.datetime, humans_only: bool, pageviews: bool = False
              ) -> Iterator[tuple[dict, str, int]]:
    """``(values, visitor, hits)`` per distinct request among the events of [start,
    end) meeting every one of ``conditions``: ``values`` the request's dimensions and
    its ``page`` (its path)."""
    site = validation.site(site)
    start, end = validation.time_range(start, end)
    checks = [(PAGE if c.dimension == PAGE else dimension(c.dimension), frozenset(c.values))
              for c in conditions]
    pages = next((values for name, values in checks if name == PAGE), None)
    one_page = next(iter(pages)) if pages is not None and len(pages) == 1 else None
    unknown_bots = site_settings(db, site).unknown_bots
    met = _precheck(site, checks)
    fields = (*reads.FIELDS, *(reads.METHOD if pageviews else ()))
    known: dict = {}
    for key, count in reads.grouped(db, site, start, end, fields, one_page, pageviews):
        if not met(key):
            continue
        path = str(key.get("p") or one_page or "")
        found = classify(site, path, query=key.get("q"), status=key.get("s"),
                         referrer_url=key.get("r"), agent=key.get("a"), address=key.get("h"),
                         country=key.get("c"),   # synthetic events carry their country
                         unknown_bots=unknown_bots)
        values = dict(found.values)
        values[PAGE] = path
        if humans_only and values.get("bot") == BOT:
            continue
        if pageviews:
            values[PAGEVIEW] = is_pageview(key, path, values.get("bot") == BOT, known)
        if all(values.get(name) in wanted for name, wanted in checks):
            yield values, found.visitor, count


def is_pageview(key: dict, path: str, bot: bool, known: dict) -> bool:
    """Whether a grouped key's hits are pageviews, as the visits count them
    (``visits.build.pageviews``): a page, not an asset, seen by a person; from a log, a
    GET answered 2xx or 304."""
    if bot or page_of(path, known) is None:
        return False
    if not key.get(reads.FROM_LOG):
        return True
    status = key.get("s")
    return key.get("m") == "GET" and status is not None and (200 <= status < 300
                                                              or status == 304)


# Dimensions classified from one field of a grouped key alone: (the field, the argument
# of ``classify`` it is).
_ONE_FIELD = {"referrer": ("r", "referrer_url"), "utm_source": ("q", "query"),
              "utm_medium": ("q", "query"), "utm_campaign": ("q", "query"),
              "status": ("s", "status"), "kind": ("p", "path")}


def _precheck(site: str, checks) -> Callable[[dict], bool]:
    """A test of a grouped key against the conditions one field decides (a page, a
    referrer, a status...), each distinct field value classified once: most keys of a
    filtered read fail it, and are then never classified whole."""
    tests = []
    for name, wanted in checks:
        if name == PAGE:
            tests.append(lambda key, wanted=wanted: "p" not in key
                         or str(key["p"] or "") in wanted)
        elif name in _ONE_FIELD:
            tests.append(_one_field_test(site, name, wanted))
    return lambda key: all(test(key) for test in tests)


def _one_field_test(site: str, name: str, wanted: frozenset) -> Callable[[dict], bool]:
    field, argument = _ONE_FIELD[name]
    verdicts: dict = {}

    def test(key: dict) -> bool:
        given = key.get(field)
        if given not in verdicts:
            found = (classify(site, str(given or "")) if argument == "path"
                     else classify(site, "/", **{argument: given}))
            verdicts[given] = dict(found.values).get(name) in wanted
        return verdicts[given]

    return test


def _frame(hits: Counter, people: dict[str, set], n: int) -> pd.DataFrame:
    rows = [{"value": v, "hits": int(h), "visitors": len(people[v])} for v, h in hits.items()]
    rows.sort(key=lambda r: (-r["hits"], r["value"]))
    frame = pd.DataFrame(rows[: max(int(n), 0)], columns=COLUMNS)
    frame["hits"] = frame["hits"].astype("int64")
    frame["visitors"] = frame["visitors"].astype("Int64")
    return frame
