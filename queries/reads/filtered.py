"""Every panel of the History page under a filter (``referrer = news.example``), from raw
events: the counters hold each dimension alone, so "the browsers of the hits from
news.example" (two dimensions) can only be counted from the events still kept
(``HITBOARD_EVENTS_TTL_DAYS`` after ingestion). One grouped read serves every panel:
events are grouped by what classification needs (``reads.grouped``), classified here
(cached), and counted per dimension, so the work grows with distinct requests, not hits.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from .. import validation
from ..dimensions.classify import BOT, classify
from ..dimensions.reads import dimension
from ..events import reads
from ..stats.sites import site_settings

PAGE = "page"  # the event's path: a panel of its own beside the dimensions
COLUMNS = ["value", "hits", "visitors"]


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
    by = dimension(by)
    site = validation.site(site)
    start, end = validation.time_range(start, end)
    wanted = {PAGE} | {dimension(d) for d in dims if d != PAGE}
    hits: dict[str, Counter] = {d: Counter() for d in wanted}
    people: dict[str, dict[str, set]] = {d: {} for d in wanted}
    everyone: set = set()
    total = 0
    unknown_bots = site_settings(db, site).unknown_bots
    for key, count in reads.grouped(db, site, start, end, tuple(reads.FIELDS)):
        path = str(key.get("p") or "")
        dims = classify(site, path, query=key.get("q"), status=key.get("s"),
                        referrer_url=key.get("r"), agent=key.get("a"), address=key.get("h"),
                        country=key.get("c"),   # synthetic events carry their country
                        unknown_bots=unknown_bots)
        values = dict(dims.values)
        if values.get(by) != value or (humans_only and values.get("bot") == BOT):
            continue
        values[PAGE] = path
        total += count
        everyone.add(dims.visitor)
        for name in wanted:
            if name in values:
                hits[name][values[name]] += count
                people[name].setdefault(values[name], set()).add(dims.visitor)
    note = (f"{by} = {value}: counted from raw events, kept for the "
            "events retention (the Data page says how long); older hits are not included")
    return Filtered({d: _frame(hits[d], people[d], n) for d in wanted}, total,
                    len(everyone), note)


def _frame(hits: Counter, people: dict[str, set], n: int) -> pd.DataFrame:
    rows = [{"value": v, "hits": int(h), "visitors": len(people[v])} for v, h in hits.items()]
    rows.sort(key=lambda r: (-r["hits"], r["value"]))
    frame = pd.DataFrame(rows[: max(int(n), 0)], columns=COLUMNS)
    frame["hits"] = frame["hits"].astype("int64")
    frame["visitors"] = frame["visitors"].astype("Int64")
    return frame
