"""Every database call hitboard makes, to MongoDB or to the embedded store (``store``).
Never imports Dash.

The reads returning pandas frames (series, catalog) are imported on first use, so a
command that only writes (``hitboard ingest``) starts without loading pandas."""

from importlib import import_module

from .counting import HitRecorder
from .errors import (
    HitboardError,
    InvalidPageError,
    InvalidRangeError,
    InvalidSiteError,
    InvalidTimeZoneError,
    NaiveTimestampError,
    RecorderOverloadedError,
    StoreLockedError,
)
from .indexes import ensure_indexes
from .jobs.backfill import BackfillTotals, DayCounts, backfill
from .stats.sites import register_synthetic, synthetic_sites
from .stats.writes import log_hit, preallocate
from .store.connection import connect, is_embedded, migrate_store, redact

_FRAMES = {"first_pages": ".stats.catalog", "list_pages": ".stats.catalog",
           "list_sites": ".stats.catalog",
           "recent_sites": ".stats.catalog", "site_span": ".stats.catalog",
           "top_pages": ".reads.top", "daily_series": ".stats.series",
           "hourly_series": ".stats.series", "minute_series": ".stats.series",
           "series": ".stats.series"}


def __getattr__(name: str):
    if name in _FRAMES:
        return getattr(import_module(_FRAMES[name], __name__), name)
    raise AttributeError(f"module 'queries' has no attribute {name!r}")


__all__ = [
    "BackfillTotals",
    "DayCounts",
    "backfill",
    "register_synthetic",
    "synthetic_sites",
    "HitRecorder",
    "HitboardError",
    "InvalidPageError",
    "InvalidRangeError",
    "InvalidSiteError",
    "InvalidTimeZoneError",
    "NaiveTimestampError",
    "RecorderOverloadedError",
    "StoreLockedError",
    "connect",
    "daily_series",
    "ensure_indexes",
    "first_pages",
    "hourly_series",
    "is_embedded",
    "migrate_store",
    "list_pages",
    "list_sites",
    "log_hit",
    "minute_series",
    "preallocate",
    "recent_sites",
    "redact",
    "series",
    "site_span",
    "top_pages",
]
