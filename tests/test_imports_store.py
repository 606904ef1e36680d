"""Imported days in the store (``queries/imports/store.py``, ``reads.py``) on every
backend: kept per site and day, the same archive once, another replacing its span, an
imported day counted at its midnight of the zone asked, removed with the site."""

from __future__ import annotations

import datetime as dt

from queries.imports import reads, store
from queries.imports.archive import Archive


def archive(sha: str, days: dict[str, int], first: str, last: str) -> Archive:
    found = Archive(sha)
    found.covers(first, last)
    found.tables = {"visitors", "pages"}
    for day, visits in days.items():
        found.days[day] = {"visitors": {(): [visits, 2 * visits, 0, visits, 60]},
                           "pages": {("h", "/"): [visits, visits, 2 * visits, 0, 0]}}
    return found


def utc(*args) -> dt.datetime:
    return dt.datetime(*args, tzinfo=dt.UTC)


def test_days_are_kept_once_and_replaced_by_another_archive(db):
    assert store.save(db, "s", archive("a", {"20240301": 5, "20240302": 7}, "20240301",
                                         "20240302"))
    assert not store.save(db, "s", archive("a", {"20240301": 99}, "20240301", "20240301"))
    found = store.days(db, "s", utc(2024, 3, 1), utc(2024, 3, 3), ("totals", "tables"))
    assert [d["totals"]["visits"] for d in found] == [5, 7]
    assert found[0]["tables"]["pages"] == [["h", "/", 5, 5, 10, 0, 0]]
    assert store.save(db, "s", archive("b", {"20240302": 1}, "20240301", "20240302"))
    assert [d["totals"]["visits"] for d in store.days(db, "s", utc(2024, 3, 1),
                                                       utc(2024, 3, 3))] == [1]
    assert store.remove(db, "s") == {store.DAYS: 1, store.FILES: 2}


def test_a_day_counts_at_its_midnight_of_the_zone_asked(db):
    store.save(db, "s", archive("a", {"20240301": 5}, "20240301", "20240301"))
    paris = dt.datetime(2024, 3, 1, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    assert len(reads.imported(db, "s", paris, paris + dt.timedelta(days=1),
                              "Europe/Paris")) == 1
    assert reads.imported(db, "s", utc(2024, 3, 1, 1), utc(2024, 3, 2), "UTC") == []
    counts, days = reads.breakdown_counts(db, "s", "page", utc(2024, 3, 1), utc(2024, 3, 2),
                                          "UTC")
    assert (counts, days) == ({"/": [10, 5]}, 1)
