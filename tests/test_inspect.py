"""What the Data page explains: collection figures and query plans, the same calls on
every backend (the embedded store answers explain() with SQLite's plan)."""

import datetime as dt

import pytest

from queries.events.writer import EventWriter
from queries.stats import schema
from queries.store import inspect

UTC = dt.UTC


def _seed(db):
    """30 event buckets of one event each (one write each)."""
    base = dt.datetime(2026, 11, 20, tzinfo=UTC)
    writer = EventWriter(db, clock=lambda: base)
    for i in range(30):
        writer.add({"time": base + dt.timedelta(minutes=i), "site": "s", "path": f"/p{i % 3}",
                    "status": 200, "bytes": 10})
        writer.flush()


def test_explain_names_the_index_and_counts_rows(db):
    _seed(db)
    plan = inspect.explain_find(db, schema.EVENTS, {"site": "s"}, sort=[("end", -1)], limit=5)
    if plan.reason and "no executionStats" in plan.reason:
        pytest.skip(f"this backend's explain() has no statistics: {plan.reason}")
    assert plan.reason is None, plan.reason
    assert plan.stage == "site_end"
    assert plan.returned == 5
    assert plan.docs_examined is not None and plan.docs_examined >= 5


def test_embedded_explain_shows_sqlite_plan_and_a_scan_when_no_index_serves(embedded_db):
    _seed(embedded_db)
    plan = inspect.explain_count(embedded_db, schema.EVENTS, {"n": 1})
    assert plan.stage == "COLLSCAN" and plan.returned == 30 and plan.docs_examined == 30
    plan = inspect.explain_count(embedded_db, schema.EVENTS, {"ingested": {"$gte": dt.datetime(
        2026, 1, 1, tzinfo=UTC)}})
    assert plan.stage == "ingested" and any("USING" in step for step in plan.detail)


def test_collection_figures(db):
    _seed(db)
    info = inspect.collection_info(db, schema.EVENTS)
    assert info.count == 30 and info.size_bytes > 0
    assert info.stored_bytes is None or info.stored_bytes > 0
    assert any(name == "site_end" for name, _ in info.indexes)


def test_the_embedded_store_says_what_its_documents_take_on_disk(embedded_db):
    embedded_db.things.insert_many([{"_id": i, "metadata": {"page": f"/p/{i}"},
                                     "hourly": {str(i % 24): i}} for i in range(400)])
    info = inspect.collection_info(embedded_db, "things")
    assert 0 < info.stored_bytes < info.size_bytes / 2
