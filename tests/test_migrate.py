"""A store written by the first embedded format (snapshot + journal) opens converted."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from fakes import stored_count

import queries
from queries.stats import schema

FIXTURE = Path(__file__).parent / "data" / "format0-store"


def _copy(tmp_path) -> Path:
    target = tmp_path / "old"
    shutil.copytree(FIXTURE, target, ignore=shutil.ignore_patterns("README.md"))
    return target


def _totals(db) -> dict:
    daily = db[schema.DAILY].find_one({"metadata.site": "demo", "metadata.page": "*"})
    return {"hits": daily["daily"], "p1": sum(d["daily"] for d in db[schema.DAILY].find(
        {"metadata.site": "demo", "metadata.page": "/p1"})),
        "events": stored_count(db, "demo"),
        "marker": db[schema.CHECKPOINTS].find_one({"_id": "marker"})}


def test_an_old_store_is_converted_on_first_open(tmp_path):
    path = _copy(tmp_path)
    db = queries.connect(str(path))
    try:
        queries.ensure_indexes(db)        # as every command does: events move into buckets
        totals = _totals(db)
        # snapshot (300 hits, 50 events) + journal (120 hits of /p1, the marker)
        assert totals["hits"] == 420
        assert totals["p1"] == 43 + 120
        assert totals["events"] == 50
        assert totals["marker"]["v"] == 1
        assert "site_end" in db[schema.EVENTS].index_information()
        assert "events" not in db.list_collection_names()
        assert db[schema.DAILY].count_documents({"metadata.site": "demo"}) == 8
    finally:
        db.client.close()
    assert not (path / "snapshot.bson").exists()
    assert sorted(p.name for p in (path / "format-0").iterdir()) == [
        "journal-1.bson", "snapshot.bson"]
    again = queries.connect(str(path))  # converted once: the next open reads SQLite
    try:
        assert _totals(again)["hits"] == 420
    finally:
        again.client.close()


def test_hitboard_migrate_command_converts_and_reports(tmp_path):
    path = _copy(tmp_path)
    result = subprocess.run([str(Path(sys.executable).parent / "hitboard"), "migrate",
                             str(path)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "converted" in result.stdout and "format-0" in result.stdout
    result = subprocess.run([str(Path(sys.executable).parent / "hitboard"), "migrate",
                             str(path)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "nothing to convert" in result.stdout
