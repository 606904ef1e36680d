"""``$inc``/``$set`` spliced into BSON bytes give exactly what decoding, updating and
re-encoding the whole document gives (or decline, leaving it to that general path)."""

import datetime as dt

import bson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pymongo.errors import WriteError

from queries.store.embedded import splice, updater
from queries.store.embedded.keys import CODEC

KEYS = st.sampled_from(["a", "b", "0", "é"])
LEAVES = st.one_of(st.integers(-5, 2**40), st.floats(allow_nan=False, width=32), st.text(
    max_size=3), st.none(), st.booleans(),
    st.just(dt.datetime(2026, 1, 1, tzinfo=dt.UTC)))
DOCS = st.recursive(st.dictionaries(KEYS, LEAVES, max_size=4),
                    lambda inner: st.dictionaries(KEYS, st.one_of(LEAVES, inner,
                                                                  st.lists(LEAVES, max_size=2)),
                                                  max_size=4), max_leaves=30)
PATHS = st.lists(KEYS, min_size=1, max_size=3).map(".".join)
UPDATES = st.fixed_dictionaries({}, optional={
    "$inc": st.dictionaries(PATHS, st.one_of(st.integers(-3, 3), st.just(0.5)), max_size=3),
    "$set": st.dictionaries(PATHS, LEAVES, max_size=2)})


@settings(max_examples=400, deadline=None)
@given(doc=DOCS, update=UPDATES)
def test_splice_equals_the_general_path(doc, update):
    doc = {"_id": 1, **doc}
    blob = bson.encode(doc)
    tree = splice.changes(update)
    if tree is None:
        return
    spliced = splice.apply(blob, tree)
    try:
        expected = bson.encode(updater.apply(bson.decode(blob, codec_options=CODEC), update))
    except Exception:  # the general path refuses: splicing must have declined too
        assert spliced is None
        return
    if spliced is not None:
        assert bson.decode(spliced, codec_options=CODEC) == bson.decode(expected,
                                                                        codec_options=CODEC)


def test_a_full_daily_document_is_spliced_not_decoded():
    doc = {"_id": "20261121/s/p", "metadata": {"site": "s"}, "daily": 10,
           "hourly": {str(h): 1 for h in range(24)},
           "minute": {str(h): {str(m): 0 for m in range(60)} for h in range(24)},
           "flushes": {"w": 1}}
    update = {"$inc": {"daily": 2, "hourly.5": 2, "minute.5.7": 1, "minute.23.59": 1},
              "$set": {"flushes.w": 2}, "$setOnInsert": {"metadata": {}}}
    out = bson.decode(splice.apply(bson.encode(doc), splice.changes(update)))
    assert out["daily"] == 12 and out["hourly"]["5"] == 3 and out["flushes"] == {"w": 2}
    assert out["minute"]["5"]["7"] == 1 and out["minute"]["23"]["59"] == 1
    assert list(out) == list(doc) and out["metadata"] == {"site": "s"}


FILTERS = st.dictionaries(st.sampled_from(["_id", "a", "k.v"]), LEAVES, max_size=2)
UPSERTS = st.fixed_dictionaries({}, optional={
    "$inc": st.dictionaries(PATHS, st.one_of(st.integers(-3, 3), st.just(0.5),
                                             st.text(max_size=1)), max_size=3),
    "$set": st.dictionaries(PATHS, st.one_of(LEAVES, st.dictionaries(KEYS, LEAVES,
                                                                     max_size=2)), max_size=2),
    "$setOnInsert": st.dictionaries(PATHS, LEAVES, max_size=2)})


@settings(max_examples=400, deadline=None)
@given(filter=FILTERS, update=UPSERTS, first=st.booleans())
def test_an_upserted_document_is_what_the_general_path_makes(filter, update, first):
    """Byte for byte (field order included), or the same refusal."""
    if first and "$setOnInsert" in update:      # $setOnInsert before the others
        update = {"$setOnInsert": update["$setOnInsert"],
                  **{k: v for k, v in update.items() if k != "$setOnInsert"}}
    try:
        expected = bson.encode(updater.apply(updater.seed(filter), update, inserting=True))
    except Exception as exc:
        try:
            updater.upserted(filter, update, splice.changes(update))
        except Exception as again:
            assert type(again) is type(exc) and str(again) == str(exc)
            return
        raise AssertionError(f"upserted accepted what apply refuses: {exc}") from None
    assert bson.encode(updater.upserted(filter, update, splice.changes(update))) == expected


def test_an_upsert_with_a_malformed_set_on_insert_is_refused_as_mongodb_refuses_it():
    update = {"$inc": {"a": 1}, "$setOnInsert": 5}
    with pytest.raises(WriteError, match=r"\$setOnInsert needs a document"):
        updater.upserted({"_id": 1}, update, splice.changes(update))


def test_remembered_paths_read_as_on_first_use(monkeypatch):
    """Paths are split once and remembered (bounded): a second update through the same
    paths gets the same tree, and a path refused once is refused again."""
    monkeypatch.setattr(splice, "_PATHS", {})
    update = {"$inc": {"minute.3.12": 1, "hourly.3": 1, "daily": 1}, "$set": {"f": 2}}
    first = splice.changes(update)
    assert set(splice._PATHS) == {"minute.3.12", "hourly.3", "daily", "f"}
    second = splice.changes(update)
    assert first.keys() == second.keys() and second["minute"]["3"] == {"12": ("$inc", 1)}
    for refused in ("_id.x", "a..b", "a.$b"):
        assert splice.changes({"$set": {refused: 1}}) is None
        assert splice.changes({"$set": {refused: 1}}) is None
    monkeypatch.setattr(splice, "_PATHS", {f"p{i}": ((), f"p{i}") for i in range(100_000)})
    assert splice.changes({"$inc": {"a.b": 1}})["a"]["b"] == ("$inc", 1)
    assert len(splice._PATHS) == 1


def test_paths_under_parents_met_before_join_their_node():
    """Runs of paths under the same parents share a node, and parents left and met
    again find theirs: the tree is the one the paths give in any order."""
    tree = splice.changes({"$inc": {"v.b.x": 1, "v.b.y": 2, "v.o.z": 3, "v.b.w": 4, "n": 5}})
    assert tree == {"v": {"b": {"x": ("$inc", 1), "y": ("$inc", 2), "w": ("$inc", 4)},
                          "o": {"z": ("$inc", 3)}}, "n": ("$inc", 5)}
    for clash in ({"a": 1, "a.b": 1}, {"a.b": 1, "a": 1}, {"a.b": 1, "c.d": 1, "a.b.c": 1}):
        assert splice.changes({"$inc": clash}) is None
