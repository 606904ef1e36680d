"""queries/indexes.py: every collection's indexes, created in one idempotent call."""

from queries import indexes
from queries.stats import schema


def test_ensure_indexes_is_idempotent_and_described(db):
    first = indexes.ensure_indexes(db)
    assert first == indexes.ensure_indexes(db)
    assert first[:2] == ["site_page_date", "site_page_date"]
    rows = {(coll, name): keys for coll, name, keys in schema.describe_indexes(db)}
    for coll in (schema.DAILY, schema.MONTHLY):
        assert rows[(coll, "site_page_date")] == [
            ("metadata.site", 1), ("metadata.page", 1), ("metadata.date", 1)]
