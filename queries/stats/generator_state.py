"""What the presenter last told the load generator, kept in the database.

``hitboard serve --demo`` starts live traffic at every start; once someone pressed Stop,
a restart must not bring it back. The last command (started or stopped, and when) is a
bookkeeping document in ``checkpoints``, shared by every server process on the database.
"""

from __future__ import annotations

import datetime as dt

from .. import validation
from . import schema

STATE_ID = "loadgen"


def remember_running(db, running: bool, now: dt.datetime | None = None) -> None:
    now = validation.timestamp(now) if now else dt.datetime.now(dt.UTC)
    db[schema.CHECKPOINTS].update_one(
        {"_id": STATE_ID}, {"$set": {"running": bool(running), "at": now}}, upsert=True)


def stopped_at(db) -> dt.datetime | None:
    """When live traffic was last stopped by hand, if that is the last command."""
    doc = db[schema.CHECKPOINTS].find_one({"_id": STATE_ID}) or {}
    if doc.get("running", True):
        return None
    return validation.timestamp(doc["at"])
