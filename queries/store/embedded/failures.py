"""SQLite's failures as the errors a MongoDB server gives for the same conditions, so
callers handle both stores alike."""

from __future__ import annotations

import sqlite3

from pymongo.errors import OperationFailure

OUT_OF_DISK_SPACE, LOCK_TIMEOUT, INTERNAL_ERROR = 14031, 24, 1


def store_failure(exc: sqlite3.Error) -> OperationFailure:
    """SQLite's failure as the error a MongoDB server gives for it: a full disk
    (``SQLITE_FULL``), a lock held past the busy timeout, or any other I/O trouble."""
    text = str(exc)
    code = (OUT_OF_DISK_SPACE if "full" in text else LOCK_TIMEOUT if "locked" in text
            else INTERNAL_ERROR)
    return OperationFailure(f"embedded store: {text}", code=code)


def raise_conflict(index: str) -> None:
    raise OperationFailure(f"an index named {index!r} exists with different options", code=85)

