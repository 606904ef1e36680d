"""``ranked_pages``: the pages people read, ranked alike by History, Live and Present."""

import datetime as dt

import pandas as pd
from dimkit import BOTS, CHROME, ingest_sample

from queries.dimensions.counters import COLLECTIONS
from queries.dimensions.pages import EVERY_HIT_NOTE, ranked_pages
from queries.ingest.run import Ingestor, ingest_file


def test_people_read_pages_bots_and_static_files_left_out(db, tmp_path):
    start = ingest_sample(db, "s", tmp_path)
    end = start + dt.timedelta(days=1)
    ranked = ranked_pages(db, "s", start, end)
    assert ranked.index.name == "page"
    assert ranked.reset_index().to_dict("records") == [
        {"page": "/", "hits": 40, "visitors": 40, "visitors_error": 0},   # Googlebot out
        {"page": "/about", "hits": 20, "visitors": 20, "visitors_error": 0},
        {"page": "/missing", "hits": 5, "visitors": 5, "visitors_error": 0}]
    assert {k: ranked.attrs[k] for k in ("note", "every_hit", "exact")} == {
        "note": "", "every_hit": False, "exact": True}
    everyone = ranked_pages(db, "s", start, end, humans=False, assets=True)
    assert everyone.loc["/", "hits"] == 40 + BOTS and everyone.loc["/style.css", "hits"] == 8
    assert list(ranked_pages(db, "s", start, end, n=1).index) == ["/"]


def test_hours_counted_before_pages_were_a_dimension_rank_every_hit(db, tmp_path):
    start = ingest_sample(db, "s", tmp_path)
    end = start + dt.timedelta(days=1)
    for coll in COLLECTIONS:                     # as an older hitboard stored them
        db[coll].update_many({}, {"$unset": {"v.page": "", "b.page": ""}})
    ranked = ranked_pages(db, "s", start, end)
    assert ranked.loc["/", "hits"] == 40 + BOTS and pd.isna(ranked.loc["/", "visitors"])
    assert "/style.css" not in ranked.index
    assert (ranked.attrs["note"], ranked.attrs["every_hit"]) == (EVERY_HIT_NOTE, True)


def test_a_store_without_dimensions_ranks_every_hit_without_a_note(db, tmp_path):
    start = ingest_sample(db, "s", tmp_path)
    end = start + dt.timedelta(days=1)
    for coll in COLLECTIONS:
        db[coll].delete_many({})
    ranked = ranked_pages(db, "s", start, end)
    assert list(ranked.index) == ["/", "/about", "/missing"]
    assert (ranked.attrs["note"], ranked.attrs["every_hit"]) == ("", True)
    assert ranked_pages(db, "s", end, end + dt.timedelta(hours=1)).empty


def _ingest(db, tmp_path, name: str, hits: list[tuple[dt.datetime, str, int]]) -> None:
    """``(time, path, times asked)`` by one person, ingested as one file (one flush)."""
    log = tmp_path / f"{name}.log"
    log.write_text("".join(
        f'81.0.0.{i % 200} - - [{when:%d/%b/%Y:%H:%M:%S +0000}] "GET {path} HTTP/1.1" 404 '
        f'100 "-" "{CHROME}"\n' for i, (when, path, n) in enumerate(hits) for _ in range(n)))
    ingestor = Ingestor(db, site="s")
    try:
        ingest_file(ingestor, log, "s", from_start=True)
    finally:
        ingestor.close()


def test_a_page_shown_gets_every_hit_the_caps_sent_to_other(db, tmp_path):
    """A scanner asking 400 paths in an hour fills the hour's (and, first in its day,
    the day's) page cap: a page in the list loses no hit there."""
    start = ingest_sample(db, "s", tmp_path)                   # /about: 20 hits at noon
    scan = [(f"/a{i:04d}", 2) for i in range(400)]             # names before /about
    _ingest(db, tmp_path, "scan1", [(start + dt.timedelta(hours=2), p, n)
                                    for p, n in [*scan, ("/about", 2)]])
    day = start.replace(hour=0) + dt.timedelta(days=1)
    _ingest(db, tmp_path, "scan2", [(day + dt.timedelta(hours=1), p, n) for p, n in scan])
    _ingest(db, tmp_path, "late", [(day + dt.timedelta(hours=5), "/about", 3)])
    now = day + dt.timedelta(days=2)
    hours = ranked_pages(db, "s", start, start + dt.timedelta(hours=3), now=now)
    assert hours.loc["/about", "hits"] == 22                  # the hour's cap
    days = ranked_pages(db, "s", start.replace(hour=0), day + dt.timedelta(days=1), now=now)
    assert days.loc["/about", "hits"] == 25                   # the day's cap
    assert days.loc["/", "hits"] == 40
