"""queries.connect: store resolution, data kept across processes, and processes sharing
one embedded store."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import queries

CHILD = """
import sys, queries
db = queries.connect(sys.argv[1], read_only=sys.argv[2] == "ro")
if sys.argv[2] == "write":
    db.counters.update_one({"_id": "c"}, {"$inc": {"n": 5}}, upsert=True)
    if sys.argv[3] == "crash":
        import os; os._exit(9)  # no close: the committed transaction alone must hold it
print("n =", db.counters.find_one({"_id": "c"})["n"])
db.client.close()
"""


def _child(store, mode, ending="close") -> str:
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(CHILD), store, mode, ending],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode in (0, 9), result.stderr
    return result.stdout.strip()


def test_redact_hides_passwords():
    assert queries.redact("mongodb://u:secret@h:27017/db") == "mongodb://u:***@h:27017/db"
    assert queries.redact("mongodb+srv://u:p@x.example/") == "mongodb+srv://u:***@x.example/"
    assert queries.redact("/var/lib/hitboard") == "/var/lib/hitboard"


def test_embedded_is_detected(embedded_db):
    assert queries.is_embedded(embedded_db)


@pytest.mark.parametrize("ending", ["close", "crash"])
def test_data_survives_in_a_new_process(tmp_path, ending):
    store = str(tmp_path / "store")
    assert _child(store, "write", ending) == ("" if ending == "crash" else "n = 5")
    assert _child(store, "write", ending) == ("" if ending == "crash" else "n = 10")
    assert _child(store, "ro") == "n = 10"


def test_a_second_writer_and_a_reader_share_the_store(tmp_path):
    store = str(tmp_path / "store")
    db = queries.connect(store)
    try:
        db.counters.insert_one({"_id": "c", "n": 3})
        assert _child(store, "write") == "n = 8"  # beside this process, not refused
        assert _child(store, "ro") == "n = 8"
        db.counters.update_one({"_id": "c"}, {"$inc": {"n": 1}})
        assert _child(store, "ro") == "n = 9"  # a new reader sees writes made since
        assert db.counters.find_one({"_id": "c"})["n"] == 9
    finally:
        db.client.close()


def test_one_store_per_directory_in_a_process(tmp_path):
    first = queries.connect(str(tmp_path / "s"))
    second = queries.connect(str(tmp_path / "s"))
    assert first.client.store is second.client.store
    first.client.close()
    second.counters.insert_one({"_id": 1})  # still open: the store counts its users
    second.client.close()
    assert second.client.store.closed


def test_a_store_path_that_cannot_hold_a_store_is_a_clear_error(tmp_path):
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a store")
    with pytest.raises(queries.HitboardError, match="is a file, not a store directory"):
        queries.connect(str(a_file))
    with pytest.raises(queries.HitboardError, match="cannot make a store in"):
        queries.connect(str(a_file / "store"))
