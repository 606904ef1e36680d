"""Errors a user can act on. All are ValueErrors: the CLI prints them and exits 2,
the dashboard shows them as a message, never a traceback."""

# MongoDB's code for a write refused by a unique index (E11000), on every backend.
DUPLICATE_KEY = 11000


class HitboardError(ValueError):
    """Base class of every error caused by input or configuration."""


class InvalidSiteError(HitboardError):
    pass


class InvalidPageError(HitboardError):
    pass


class NaiveTimestampError(HitboardError):
    pass


class InvalidRangeError(HitboardError):
    pass


class InvalidTimeZoneError(HitboardError):
    pass


class StoreLockedError(HitboardError):
    """Another process holds the embedded store for writing."""


class StoreReadOnlyError(HitboardError):
    pass


class InvalidStoreError(HitboardError):
    """The embedded store's path cannot hold a store (a file, no permission)."""


class RecorderOverloadedError(HitboardError):
    """The recorder's pending hits reached their bound and the database is not draining them."""
