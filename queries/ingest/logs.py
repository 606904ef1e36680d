"""The logs ingested into a store, as their checkpoints (``session``) tell: what the Data
page lists, so a log followed in the background, and the lines it could not read, are
in sight."""

from __future__ import annotations

import datetime as dt
import socket
from dataclasses import dataclass, field

from .. import validation
from ..stats import schema
from .session import FLUSHING, process_identity


@dataclass(frozen=True)
class LogIngest:
    path: str
    host: str
    lines: int                       # read and committed, every run together
    hits: int
    rejected: dict[str, int] = field(default_factory=dict)   # reason -> lines
    tolerated: dict[str, int] = field(default_factory=dict)  # oddity -> lines parsed
    updated: dt.datetime | None = None    # the last batch committed
    pid: int | None = None           # the run reading it now, if any
    running: bool | None = None      # None: read on another host, not known here
    interrupted: bool = False        # a batch begun and not committed (killed run)


def log_ingests(db) -> list[LogIngest]:
    """Every log path ingested, newest first. Whether a run is reading it now is known
    on the host that reads it (its process is checked)."""
    here = socket.gethostname()
    found = []
    for doc in db[schema.CHECKPOINTS].find({"writer": {"$exists": True}}):
        totals = doc.get("totals") or {}
        holder = doc.get("process")
        running = None
        if doc.get("host") == here:
            running = holder is not None and process_identity(holder[0]) == holder
        found.append(LogIngest(
            path=doc["path"], host=doc.get("host", ""), lines=totals.get("lines", 0),
            hits=totals.get("hits", 0), rejected=dict(totals.get("rejected") or {}),
            tolerated=dict(totals.get("tolerated") or {}),
            updated=doc.get("updated") and validation.stored_time(doc["updated"]),
            pid=holder[0] if holder is not None and running is not False else None,
            running=running, interrupted=doc.get("state") == FLUSHING))
    epoch = dt.datetime.min.replace(tzinfo=dt.UTC)
    return sorted(found, key=lambda log: log.updated or epoch, reverse=True)

