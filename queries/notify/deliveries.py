"""Each send claimed once: the contract the alerts checker calls.

A stand-in until the real channels (SMTP, signed webhooks, retries, the delivery log)
arrive with the email reports: :func:`claim` is the real one (a unique ``_id`` in
``notify.claims``, as ``claim_demo_backfill`` does), :func:`deliver` claims, then only
logs what it would send.
"""

from __future__ import annotations

import datetime as dt
import logging

from pymongo.errors import DuplicateKeyError, PyMongoError

log = logging.getLogger(__name__)
CLAIMS = "notify.claims"


def claim(db, claim_id: str) -> bool:
    """True for the one caller that may send ``claim_id``; False when it is taken."""
    try:
        db[CLAIMS].insert_one({"_id": str(claim_id), "at": dt.datetime.now(dt.UTC)})
    except DuplicateKeyError:
        return False
    return True


def deliver(services, *, claim_id: str, site: str, channel: str, to: str, subject: str,
            text: str, html: str | None = None, payload: dict | None = None,
            images: dict[str, bytes] | None = None) -> str:
    """Claim, then log the send; "sent", "taken" or "failed". Never raises."""
    try:
        if not claim(services.db, claim_id):
            return "taken"
    except PyMongoError as exc:
        log.error("delivery %s not claimed: %s", claim_id, exc)
        return "failed"
    log.info("delivery %s to %s %s for %s: %s", claim_id, channel, to, site, subject)
    return "sent"
