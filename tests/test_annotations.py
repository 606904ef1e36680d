"""queries.annotations: notes pinned to a time, on every backend."""

import datetime as dt

import pytest
from dashkit import utc

import queries
from queries import annotations as notes


def test_a_note_is_read_back_in_its_range_with_the_all_sites_ones(db):
    first = notes.add_annotation(db, "s", utc(2026, 11, 20, 9), "deployed v2", "deploy", "ci")
    notes.add_annotation(db, None, utc(2026, 11, 20, 10), "CDN change")  # all sites
    notes.add_annotation(db, "other", utc(2026, 11, 20, 11), "not ours")
    notes.add_annotation(db, "s", utc(2026, 11, 22), "outside the range")
    found = notes.annotations_between(db, "s", utc(2026, 11, 20), utc(2026, 11, 21))
    assert [(a["text"], a["site"], a["kind"]) for a in found] == [
        ("deployed v2", "s", "deploy"), ("CDN change", "*", "note")]
    assert found[0]["id"] == first and found[0]["author"] == "ci"
    assert found[0]["time"] == utc(2026, 11, 20, 9)


def test_list_is_newest_first_and_delete_removes_one(db):
    ids = [notes.add_annotation(db, "s", utc(2026, 11, d), f"day {d}") for d in (1, 2, 3)]
    assert [a["text"] for a in notes.list_annotations(db, "s")] == ["day 3", "day 2", "day 1"]
    assert notes.delete_annotation(db, ids[1]) is True
    assert notes.delete_annotation(db, ids[1]) is False
    assert [a["text"] for a in notes.list_annotations(db)] == ["day 3", "day 1"]


def test_a_keyed_note_is_written_once(db):
    assert notes.add_annotation(db, "s", utc(2026, 1, 1), "spike", "anomaly", key="k1") == "k1"
    assert notes.add_annotation(db, "s", utc(2026, 1, 1), "spike", "anomaly", key="k1") is None
    assert len(notes.list_annotations(db, "s")) == 1
    assert notes.delete_annotation(db, "k1") is True


@pytest.mark.parametrize(("kwargs", "reason"), [
    ({"text": ""}, "empty"),
    ({"text": "x" * 281}, "at most 280"),
    ({"text": 5}, "must be a string"),
    ({"text": "a\x00b"}, "control character"),
    ({"kind": "party"}, "unknown kind"),
    ({"site": "no spaces"}, "invalid site"),
    ({"time": dt.datetime(2026, 1, 1)}, "no time zone"),
    ({"author": "a" * 65}, "author"),
])
def test_bad_input_is_refused_with_the_reason(db, kwargs, reason):
    args = {"site": "s", "time": utc(2026, 1, 1), "text": "ok", "kind": "note", **kwargs}
    with pytest.raises(queries.HitboardError, match=reason):
        notes.add_annotation(db, **args)
    assert notes.list_annotations(db) == []


def test_markup_is_stored_as_given(db):
    notes.add_annotation(db, "s", utc(2026, 1, 1), "<script>alert(1)</script>")
    assert notes.list_annotations(db)[0]["text"] == "<script>alert(1)</script>"


def test_bad_ids_are_refused(db):
    with pytest.raises(queries.HitboardError, match="invalid annotation id"):
        notes.delete_annotation(db, "")
    assert notes.delete_annotation(db, "0" * 24) is False


def test_an_excursion_is_noted_once_however_many_hours_it_lasts(db):
    hour = utc(2026, 11, 22, 14)
    assert notes.record_excursion(db, "s", hour, "above", "3× the usual") is not None
    assert notes.record_excursion(db, "s", hour, "above", "3× the usual") is None
    for later in (1, 2):
        assert notes.record_excursion(db, "s", hour + dt.timedelta(hours=later), "above",
                                      "still high") is None
    assert notes.record_excursion(db, "s", hour + dt.timedelta(hours=2), "below", "low") \
        is not None
    # a gap of an hour ends the excursion: the next one is a new note
    assert notes.record_excursion(db, "s", hour + dt.timedelta(hours=4), "above", "again") \
        is not None
    assert [(a["kind"], a["text"]) for a in reversed(notes.list_annotations(db, "s"))] == [
        ("anomaly", "3× the usual"), ("anomaly", "low"), ("anomaly", "again")]
