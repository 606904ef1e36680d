"""What a writer could not store because of what it holds, kept aside with the reason,
so one bad item never stops the counting of everything else.

A writer's failure is either the store's (a full disk, a lock held too long, a server
gone: :func:`transient`, retried with backoff, nothing dropped) or its content's (a
string no database can encode, a document refused for its shape: retrying would fail
forever). A batch failing for its content is written again one document at a time, and
the documents that still fail are set aside here: counted, logged, and listed in the
``quarantine`` collection (best effort, their text made ASCII so it can always be
stored), where ``/healthz`` and the Data page show them. Validation at the edges
(``/hit``, the log parser) keeps such items out; this is the last line.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import uuid
from dataclasses import dataclass

from pymongo.errors import BulkWriteError, PyMongoError

from .errors import DUPLICATE_KEY

log = logging.getLogger(__name__)
COLLECTION = "quarantine"
KEPT = 100          # items remembered in memory per writer (all are counted)
# MongoDB's codes for a write refused because of what it holds: a bad value or type,
# field names it cannot take, a document grown past 16 MB.
CONTENT_CODES = frozenset({2, 9, 14, 52, 55, 56, 57, 10334, 16837, 17419, 17280})


def transient(exc: BaseException) -> bool:
    """Whether a write failed because of the store (retry it) rather than its content."""
    if not isinstance(exc, PyMongoError):
        return False                     # an encoding error, a bad value: its content's
    if isinstance(exc, BulkWriteError):
        if exc.details.get("writeConcernErrors"):
            return True
        codes = {e.get("code") for e in exc.details.get("writeErrors", [])} - {DUPLICATE_KEY}
        return not codes or not codes <= CONTENT_CODES
    return getattr(exc, "code", None) not in CONTENT_CODES


@dataclass(frozen=True)
class Item:
    at: dt.datetime
    source: str
    what: str        # the document or event, in ASCII
    reason: str
    hits: int


class Quarantine:
    """One writer's items set aside: ``source`` names the writer (stats, dimensions,
    events)."""

    def __init__(self, db, source: str):
        self.db, self.source = db, source
        self.items: list[Item] = []
        self.count = self.hits = 0
        self._lock = threading.Lock()

    def keep(self, what, reason: BaseException | str, hits: int = 0) -> None:
        """Set one item aside, with why; never raises."""
        item = Item(dt.datetime.now(dt.UTC), self.source, ascii(what)[:500],
                    ascii(reason if isinstance(reason, str)
                          else f"{type(reason).__name__}: {reason}")[:300], int(hits))
        with self._lock:
            self.count += 1
            self.hits += item.hits
            self.items = [*self.items[-(KEPT - 1):], item]
        log.error("%s: set aside (%s) %s", self.source, item.reason, item.what)
        try:
            self.db[COLLECTION].insert_one({"_id": uuid.uuid4().hex, **item.__dict__})
        except Exception as exc:    # the store may be what fails: the log has it
            log.warning("could not list a quarantined item in the store: %s", exc)


def listed(db, n: int = 50) -> list[dict]:
    """The newest items set aside by any writer of the store, for the Data page."""
    return list(db[COLLECTION].find({}, {"_id": 0}).sort("at", -1).limit(n))
