"""One page's breakdown, from raw events: the combination page × dimension is not
pre-aggregated (per-page counters would double every flush's upserts), so it is limited
to the events still kept (``HITBOARD_EVENTS_TTL_DAYS`` after ingestion). The events are
grouped in the database by what classification needs, then classified here (cached), so
the work grows with distinct (client, agent, referrer, query, status), not with hits."""

from __future__ import annotations

import datetime as dt
from collections import Counter

import pandas as pd

from ..stats import schema
from .classify import classify, is_bot_agent


def page_breakdown(db, site: str, page: str, dim: str, start: dt.datetime,
                   end: dt.datetime, humans: bool = False) -> pd.DataFrame:
    """Hits and exact visitors per value of ``dim`` for one page over [start, end), bots
    left out if ``humans``."""
    pipeline = [
        {"$match": {"site": site, "path": page, "time": {"$gte": start, "$lt": end}}},
        {"$group": {"_id": {"h": "$host", "a": "$user_agent", "r": "$referrer",
                            "q": "$query", "s": "$status"}, "n": {"$sum": 1}}},
    ]
    hits: Counter = Counter()
    visitors: dict[str, set] = {}
    for group in db[schema.EVENTS].aggregate(pipeline):
        key = group["_id"]
        dims = classify(site, page, query=key.get("q"), status=key.get("s"),
                        referrer_url=key.get("r"), agent=key.get("a"), address=key.get("h"))
        if humans and dims.bot:
            continue
        for name, value in dims.values:
            if name == dim:
                hits[value] += group["n"]
                visitors.setdefault(value, set()).add(dims.visitor)
    rows = [{"value": v, "hits": int(n), "visitors": len(visitors[v])} for v, n in hits.items()]
    rows.sort(key=lambda r: (-r["hits"], r["value"]))
    frame = pd.DataFrame(rows, columns=["value", "hits", "visitors"])
    frame["hits"] = frame["hits"].astype("int64")
    frame["visitors"] = frame["visitors"].astype("Int64")
    frame.attrs["note"] = ("one page: counted from raw events, kept for the "
                           "events retention (the Data page says how long); older hits "
                           "are not included")
    return frame


def active_visitors(db, site: str, now: dt.datetime | None = None, minutes: int = 5,
                    humans: bool = False) -> int:
    """Distinct (address, agent) pairs among the site's raw events of the last
    ``minutes`` (the Live page's "active now"): exact, from events, which are kept far
    longer than this window; bots (by their agent) left out if ``humans``."""
    now = now or dt.datetime.now(dt.UTC)
    pipeline = [
        {"$match": {"site": site, "time": {"$gte": now - dt.timedelta(minutes=minutes),
                                           "$lte": now}}},
        {"$group": {"_id": {"h": "$host", "a": "$user_agent"}}},
    ]
    return sum(1 for group in db[schema.EVENTS].aggregate(pipeline)
               if not (humans and is_bot_agent(group["_id"].get("a"))))
