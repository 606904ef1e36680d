"""Reads for callbacks, shared by every viewer of the process.

A callback calls ``shared(fn, *args, seconds=...)`` with a ``queries`` read function; the
result is computed once per ``seconds``-long bucket and per argument list, then served
from the cache. Callers derive "now" from :func:`now` with the same ``seconds``, so the
arguments of every viewer in a bucket are identical.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import pandas as pd

import queries
from queries.reads import live
from queries.reads.live import HitTotals

from .authority.scope import check_site, sees_all, visible
from .cache import bucket_start
from .services import get_services

T = TypeVar("T")
MAX_STALE_BUCKETS = 1


def history_seconds() -> int:
    return get_services().settings.cache_seconds


def live_seconds() -> int:
    return get_services().settings.live_cache_seconds


def now(seconds: int) -> dt.datetime:
    return bucket_start(seconds)


def shared(fn: Callable[..., T], *args, seconds: int, **kwargs) -> T:
    """``fn(db, *args, **kwargs)``, cached for the current bucket of ``seconds``."""
    services = get_services()
    key = (fn.__module__, fn.__qualname__, args, tuple(sorted(kwargs.items())),
           int(time.time() // seconds))
    return services.cache.get_or_compute(key, lambda: fn(services.db, *args, **kwargs),
                                         timeout=2 * seconds)


def derived(fn: Callable[..., T], *args, given: dict, seconds: int, **kwargs) -> T:
    """``fn(db, *args, **given, **kwargs)``, cached as ``shared`` caches it without
    ``given``: the results of other reads of the same arguments (a cached frame the
    cache's key would have to spell out whole)."""
    services = get_services()
    key = (fn.__module__, fn.__qualname__, args, tuple(sorted(kwargs.items())),
           int(time.time() // seconds))
    return services.cache.get_or_compute(
        key, lambda: fn(services.db, *args, **given, **kwargs), timeout=2 * seconds)


def sites() -> list[str]:
    """Known sites the principal reads; without the synthetic ones when the
    hide_synthetic setting says so."""
    hide = get_services().settings.hide_synthetic
    return visible(shared(queries.list_sites, include_synthetic=not hide,
                          seconds=history_seconds()))


def synthetic_sites() -> set[str]:
    return set(shared(queries.synthetic_sites, seconds=history_seconds()))


def site_pages(site: str) -> list[str]:
    return shared(queries.list_pages, check_site(site), seconds=history_seconds())


def first_pages(site: str, n: int) -> list[str]:
    return shared(queries.first_pages, check_site(site), n, seconds=history_seconds())


def resolve_site(site: str | None, fresh: bool = False) -> str | None:
    """The site the URL names, else the most recently active real site (a synthetic
    one only when there is no other), else None (empty store). ``fresh``: while the
    store looks empty, look again every live bucket, so the live page shows the first
    hits without waiting for the history cache to expire. A viewer's choice is among
    its sites; another site named is refused (``scope``)."""
    if site:
        return check_site(site)
    hide = get_services().settings.hide_synthetic
    known = shared(queries.recent_sites, include_synthetic=not hide, seconds=history_seconds())
    if not known and fresh:
        known = shared(queries.recent_sites, seconds=live_seconds())
    if not sees_all():
        known = visible(known) or visible(sites())
    return known[0] if known else None


@dataclass(frozen=True)
class LiveSnapshot:
    """Everything the live page shows, as of ``as_of`` (a bucket start)."""

    as_of: dt.datetime
    series: pd.DataFrame
    totals: HitTotals
    top: pd.DataFrame


def live_snapshot(site: str, pages: tuple[str, ...], tz: str, window_minutes: int,
                  humans: bool = True) -> LiveSnapshot:
    """The live view of a site (its top pages without bots unless ``humans`` is false),
    shared by all its viewers and computed once per live bucket. While one viewer's
    request refreshes it in the background, the others get the previous bucket's
    snapshot at once (``as_of`` says how old); only a snapshot older than that is
    computed while the viewer waits."""
    services = get_services()
    seconds = services.settings.live_cache_seconds
    bucket = int(time.time() // seconds)
    db = services.db

    def compute() -> LiveSnapshot:
        now = dt.datetime.fromtimestamp(bucket * seconds, dt.UTC)
        return LiveSnapshot(now, *live.snapshot(db, site, pages, tz, now, window_minutes,
                                                humans))

    key = ("live", site, pages, tz, window_minutes, humans)
    return services.cache.get_or_refresh(key, bucket, compute, timeout=60,
                                         max_stale=MAX_STALE_BUCKETS)
