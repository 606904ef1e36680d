"""The site registry: which sites hold synthetic traffic, so charts can leave them out.

One document per registered site ``{_id: site, synthetic: bool, registered: date}``.
Sites that only ever received real hits need no entry: a site is synthetic only if the
registry says so.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from pymongo.errors import DuplicateKeyError

from .. import validation
from ..errors import InvalidSiteError
from . import schema

DEMO_CLAIM = "demo-backfill"


def register_synthetic(db, sites: Iterable[str]) -> list[str]:
    """Mark ``sites`` as synthetic before the generator writes to them. A site that holds
    traffic but is not registered as synthetic is real: refused, never mixed."""
    names = [validation.site(s) for s in sites]
    known = set(synthetic_sites(db))
    with_data = set(db[schema.MONTHLY].distinct("metadata.site", {"metadata.site": {"$in": names}}))
    real = sorted(with_data - known)
    if real:
        raise InvalidSiteError(f"site {real[0]!r} holds real traffic: the load generator only "
                               "writes to sites registered as synthetic")
    now = dt.datetime.now(dt.UTC)
    for name in names:
        db[schema.SITES].update_one(
            {"_id": name},
            {"$set": {"synthetic": True}, "$setOnInsert": {"registered": now}},
            upsert=True,
        )
    return names


def synthetic_sites(db) -> list[str]:
    return sorted(doc["_id"] for doc in db[schema.SITES].find({"synthetic": True}, {"_id": 1}))


def claim_demo_backfill(db) -> bool:
    """True for the one caller that may backfill the demo's history: the first to insert
    a fixed ``_id``, even when several server processes start at once on one database."""
    try:
        db[schema.CHECKPOINTS].insert_one({"_id": DEMO_CLAIM, "at": dt.datetime.now(dt.UTC)})
    except DuplicateKeyError:
        return False
    return True
