"""Everything that touches MongoDB. Never imports Dash."""

from .backfill import BackfillTotals, DayCounts, backfill
from .catalog import list_pages, list_sites, top_pages
from .connection import connect, is_embedded, migrate_store, redact
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
from .recorder import HitRecorder
from .series import daily_series, hourly_series, minute_series, series
from .sites import register_synthetic, synthetic_sites
from .writes import log_hit, preallocate

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
