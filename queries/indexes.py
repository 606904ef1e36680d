"""Every index hitboard's reads rely on, created in one call.

Each collection's module declares its own indexes; this module only gathers them, so
``schema`` (names and shapes) imports none of the modules that import it.
"""

from __future__ import annotations

from .annotations import ensure_annotation_indexes
from .dimensions import ensure_indexes as ensure_dimension_indexes
from .events.collection import ensure_event_indexes
from .events.custom import ensure_custom_indexes
from .imports.store import ensure_indexes as ensure_import_indexes
from .rollups.build import ensure_rollup_indexes
from .stats import schema
from .visits.store import ensure_visit_indexes


def ensure_indexes(db) -> list[str]:
    """Create the indexes charts rely on (idempotent); returns their names."""
    names = [db[name].create_index(schema.STATS_INDEX, name="site_page_date")
             for name in (schema.DAILY, schema.MONTHLY)]
    return (names + ensure_event_indexes(db) + ensure_rollup_indexes(db)
            + ensure_dimension_indexes(db) + ensure_annotation_indexes(db)
            + ensure_visit_indexes(db) + ensure_custom_indexes(db)
            + ensure_import_indexes(db))
