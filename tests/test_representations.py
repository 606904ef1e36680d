"""queries.representations: every collection a hit is written to is named by one
representation, the Data page's cells say which, and ARCHITECTURE.md's table is the
same table."""

import re
from pathlib import Path

from queries.representations import REPRESENTATIONS, holding

ROOT = Path(__file__).resolve().parent.parent


def test_each_collection_belongs_to_one_representation_and_bookkeeping_to_none():
    named = [c for r in REPRESENTATIONS for c in r.collections]
    assert len(named) == len(set(named))
    assert holding("stats.daily").name == "pre-aggregated stats"
    assert holding("visitors.values").name == "visitor sketches"
    assert holding("rollups.backfilled").name == "rollups"
    assert holding("sites") is None and holding("annotations") is None


def test_the_stores_own_collections_after_an_ingest_are_all_accounted_for(db, tmp_path):
    """Every collection an ingest with every dimension fills is a representation's or
    known bookkeeping: a new one cannot appear without saying what it holds."""
    from dimkit import ingest_sample

    ingest_sample(db, "s", tmp_path)
    unaccounted = sorted(name for name in db.list_collection_names()
                         if holding(name) is None)
    assert unaccounted == ["annotations", "checkpoints"]   # notes; progress marks


def test_architecture_md_has_the_same_table():
    text = (ROOT / "ARCHITECTURE.md").read_text()
    rows = {line.split("|")[1].strip(): line for line in text.splitlines()
            if line.startswith("| ") and "|" in line[2:]}
    for representation in REPRESENTATIONS:
        row = next((line for name, line in rows.items()
                    if name.startswith(representation.name)), None)
        assert row is not None, representation.name
        listed = set(re.findall(r"`([\w.]+)`", row))
        assert set(representation.collections) <= listed, (
            representation.name, set(representation.collections) - listed)
