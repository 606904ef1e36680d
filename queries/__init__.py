"""Everything that touches MongoDB. Never imports Dash."""

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
from .stats.backfill import BackfillTotals, DayCounts, backfill
from .stats.catalog import list_pages, list_sites, top_pages
from .stats.recorder import HitRecorder
from .stats.series import daily_series, hourly_series, minute_series, series
from .stats.sites import register_synthetic, synthetic_sites
from .stats.writes import log_hit, preallocate
from .store.connection import connect, is_embedded, migrate_store, redact

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
    "hourly_series",
    "is_embedded",
    "migrate_store",
    "list_pages",
    "list_sites",
    "log_hit",
    "minute_series",
    "preallocate",
    "redact",
    "series",
    "top_pages",
]
