"""A site's data removed from every collection that holds it: the way to count a site
again from its logs (``hitboard site remove NAME --data``, then ``hitboard ingest
--from-start``), or to drop a site nobody wants.

Each collection names its site in one field; the raw events' and rollups' ``site``, the
pre-aggregated documents' ``metadata.site``. Log checkpoints stay: they belong to files,
which may feed other sites too (``--from-start`` reads a file again).
"""

from __future__ import annotations

from .annotations import COLLECTION as ANNOTATIONS
from .dimensions import sketches
from .dimensions.counters import COLLECTIONS as DIMENSION_COUNTERS
from .events import expired
from .events.custom import COLLECTION as CUSTOM_EVENTS
from .imports.store import COLLECTIONS as IMPORTED
from .notify.deliveries import DELIVERIES
from .rollups.build import BACKFILLED
from .shares import COLLECTION as SHARES
from .stats import schema
from .stats.sites import unregister
from .validation import site as checked_site
from .visits.store import MONTHS, VISITS

BY_METADATA = (schema.DAILY, schema.MONTHLY, *DIMENSION_COUNTERS, *sketches.COLLECTIONS)
BY_SITE = (schema.EVENTS, schema.APART, expired.COLLECTION, *schema.ROLLUPS.values(), BACKFILLED,
           VISITS, MONTHS, CUSTOM_EVENTS, ANNOTATIONS, SHARES, *IMPORTED, DELIVERIES)


def remove(db, site: str) -> dict[str, int]:
    """Delete every document of ``site`` and its registry record; returns how many left
    each collection."""
    name = checked_site(site)
    removed = {coll: db[coll].delete_many({"metadata.site": name}).deleted_count
               for coll in BY_METADATA}
    removed.update({coll: db[coll].delete_many({"site": name}).deleted_count
                    for coll in BY_SITE})
    removed[schema.SITES] = int(unregister(db, name))
    return {coll: n for coll, n in removed.items() if n}
