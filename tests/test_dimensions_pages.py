"""``ranked_pages``: the pages people read, ranked alike by History, Live and Present."""

import datetime as dt

import pandas as pd
from dimkit import BOTS, ingest_sample

from queries.dimensions.counters import COLLECTIONS
from queries.dimensions.pages import EVERY_HIT_NOTE, ranked_pages


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
