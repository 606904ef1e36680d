"""dashboard.pages.sites.view: the Sites page's reads and writes, through the registry. The
list (filtered, capped, its last hits, in the viewer's zone), the form's text read into
settings, and every bad value refused with the registry's own words."""

from __future__ import annotations

import datetime as dt

import pytest

import queries
from dashboard.pages.sites import view as view
from queries import InvalidSiteError, InvalidTimeZoneError
from queries import annotations as notes
from queries.stats.sites import register, registered_sites, site_settings

T = dt.datetime(2026, 11, 21, 13, 5, 30, tzinfo=dt.UTC)
QUERY = {"site": ["blog"], "page": ["/x"], "tz": ["Asia/Kolkata"], "theme": ["dark"],
         "range": ["30d"]}


def names(db) -> list[str]:
    return [s.name for s in registered_sites(db)]


def test_the_list_holds_every_site_with_its_last_hit_in_the_viewers_zone(db):
    register(db, "blog", "admin", tz="Europe/Paris", origins=["https://Blog.example.com:443"])
    queries.log_hit(db, T, "blog", "/a")
    register(db, "quiet", "ingest")
    found = view.listing(db, QUERY, "Asia/Kolkata")
    assert (found.total, found.matching) == (2, 2)
    blog, quiet = found.rows
    assert blog["name"] == "blog" and blog["last_hit"] == "2026-11-21 18:35"   # +05:30
    assert blog["origins"] == ["https://blog.example.com"] and blog["tz"] == "Europe/Paris"
    assert blog["via"] == "the admin" and quiet["via"] == "a log ingest"
    assert quiet["last_hit"] is None and quiet["tz"] is None and quiet["agents"] == "human"
    assert blog["href"] == "/sites?site=blog&page=/x&tz=Asia/Kolkata&theme=dark&edit=blog"


def test_the_list_is_filtered_by_name_and_capped(db):
    for name in ("alpha", "beta", "alphabet", "gamma"):
        register(db, name, "admin")
    found = view.listing(db, {}, "UTC", " ALPHA ")
    assert [r["name"] for r in found.rows] == ["alpha", "alphabet"]
    assert view.listing_note(found, " ALPHA ", "UTC") == (
        "4 sites registered, 2 matching. Times in UTC.")
    capped = view.listing(db, {}, "UTC", limit=3)
    assert len(capped.rows) == 3 and capped.matching == 4
    assert "showing the first 3 by name" in view.listing_note(capped, None, "UTC")
    nothing = view.listing(db, {}, "UTC", "zzz")
    assert view.listing_note(nothing, "zzz", "UTC") == "No registered site's name holds 'zzz'."


def test_an_empty_registry_says_how_to_begin(db):
    found = view.listing(db, {}, "UTC")
    assert found.rows == [] and "No site is registered yet" in view.listing_note(found, None,
                                                                                "UTC")


def test_links_keep_the_shell_and_leave_the_page_its_own_keys():
    assert view.list_href(QUERY) == "/sites?site=blog&page=/x&tz=Asia/Kolkata&theme=dark"
    assert view.history_href("shop", QUERY) == "/history?site=shop&tz=Asia/Kolkata&theme=dark"
    assert view.edit_name({"edit": ["shop"]}) == "shop"
    assert view.edit_name({"edit": [""]}) is None and view.edit_name({}) is None


def test_zones_and_times():
    assert view.zone_shown("Europe/Paris") == "Europe/Paris"
    assert view.zone_shown("Mars/Olympus") == "UTC"
    assert view.when(None, "UTC") is None
    assert view.when(T, "America/St_Johns") == "2026-11-21 09:35"


def test_origins_are_read_one_a_line_or_separated_by_commas_and_spaces():
    assert view.origins_from_text(" https://a.example\n\nhttp://b.example:8080, https://c ") == [
        "https://a.example", "http://b.example:8080", "https://c"]
    assert view.origins_from_text(None) == [] and view.origins_from_text(" \n ") == []
    assert view.form_settings(None, "", None) == {"origins": []}
    assert view.form_settings("UTC", "https://a", "bot") == {
        "origins": ["https://a"], "tz": "UTC", "unknown_agents": "bot"}


def test_adding_a_site_registers_it_as_the_admins_with_its_settings(db):
    assert view.add(db, " blog.example.com ", "Europe/Paris",
                    "https://blog.example.com\nhttps://www.blog.example.com", "bot") == \
        "blog.example.com"
    settings = site_settings(db, "blog.example.com")
    assert (settings.via, settings.tz, settings.origins, settings.unknown_agents) == (
        "admin", "Europe/Paris", ("https://blog.example.com", "https://www.blog.example.com"),
        "bot")
    with pytest.raises(InvalidSiteError, match="already registered"):
        view.add(db, "blog.example.com", None, "", "human")


@pytest.mark.parametrize(("name", "tz", "origins", "error", "words"), [
    ("", None, "", InvalidSiteError, "type the site's name"),
    ("https://blog.example.com/", None, "", InvalidSiteError,
     "a site is named, not addressed: name it blog.example.com and give "
     "https://blog.example.com as its origin"),
    ("ftp://", None, "", InvalidSiteError, "invalid site 'ftp://': use 1 to 64"),
    ("a" * 65, None, "", InvalidSiteError, "1 to 64 letters"),
    ("<b>x</b>", None, "", InvalidSiteError, "invalid site"),
    ("blog", "Mars/Olympus", "", InvalidTimeZoneError, "unknown time zone 'Mars/Olympus'"),
    ("blog", None, "blog.example.com", InvalidSiteError, "is not an origin"),
    ("blog", None, "ftp://blog.example.com", InvalidSiteError, "is not an origin"),
    ("blog", None, "\n".join(f"https://h{i}.example" for i in range(21)), InvalidSiteError,
     "at most 20 origins"),
])
def test_bad_input_is_refused_in_words_and_nothing_is_registered(db, name, tz, origins, error,
                                                                words):
    with pytest.raises(error, match=words):
        view.add(db, name, tz, origins, "human")
    assert names(db) == []


def test_saving_changes_the_settings_and_an_empty_origins_box_means_any(db):
    register(db, "blog", "admin", origins=["https://blog.example.com"])
    saved = view.save(db, "blog", "Asia/Tokyo", "https://blog.example.com\nhttps://b.example",
                      "bot")
    assert (saved.tz, saved.origins, saved.unknown_agents) == (
        "Asia/Tokyo", ("https://b.example", "https://blog.example.com"), "bot")
    assert view.saved_words(saved) == (
        "Saved. Time zone Asia/Tokyo · beacon hits from https://b.example, "
        "https://blog.example.com · hits without a user agent count as bots · a visit "
        "ends after 30 minutes without a pageview · its counters count the first source "
        "to feed it.")
    saved = view.save(db, "blog", None, "", "human", None, "beacon")
    assert saved.primary_source == "beacon" and "count its beacon" in view.saved_words(saved)
    assert view.save(db, "blog", None, "", "human").primary_source == "beacon"   # kept
    with pytest.raises(InvalidSiteError, match="primary source is one of"):
        view.save(db, "blog", None, "", "human", None, "email")
    assert view.save(db, "blog", None, "", "human", 45.0).visit_minutes == 45
    assert view.save(db, "blog", None, "", "human", None).visit_minutes == 45   # kept
    for bad in (0, 1441, 2.5, "x", True):
        with pytest.raises(InvalidSiteError, match="a visit's timeout is 1 to 1440"):
            view.save(db, "blog", None, "", "human", bad)
    anywhere = view.save(db, "blog", None, "", "human")
    assert anywhere.origins == () and anywhere.tz == "Asia/Tokyo"     # no zone: kept
    with pytest.raises(InvalidSiteError, match="is not an origin"):
        view.save(db, "blog", None, "nonsense", "human")
    assert site_settings(db, "blog").origins == ()
    with pytest.raises(InvalidSiteError, match="not registered"):
        view.save(db, "gone", None, "", "human")


def test_removing_the_registration_keeps_the_counts(db):
    register(db, "blog", "admin")
    queries.log_hit(db, T, "blog", "/a")
    assert view.remove(db, "blog", False, None).startswith("Unregistered blog")
    assert names(db) == [] and queries.list_sites(db) == ["blog"]
    with pytest.raises(InvalidSiteError, match="not registered"):
        view.remove(db, "blog", False, None)


def test_deleting_the_data_needs_the_sites_name_typed(db):
    register(db, "blog", "admin")
    register(db, "other", "admin")
    for site in ("blog", "other"):
        queries.log_hit(db, T, site, "/a")
    notes.add_annotation(db, "blog", T, "deployed")
    for typed in (None, "", "blo", "other", "BLOG"):
        with pytest.raises(InvalidSiteError, match="type the site's name, blog, to confirm"):
            view.remove(db, "blog", True, typed)
    assert queries.list_sites(db) == ["blog", "other"]
    said = view.remove(db, "blog", True, " blog ")
    assert said.startswith("Deleted blog and its data: ") and "documents from" in said
    assert names(db) == ["other"] and queries.list_sites(db) == ["other"]
    assert notes.list_annotations(db) == []
    assert view.remove(db, "blog", True, "blog") == "Deleted blog: it held nothing."


def test_a_site_to_edit_is_read_or_said_missing(db):
    register(db, "blog", "admin")
    queries.log_hit(db, T, "blog", "/a")
    found = view.edited(db, "blog")
    assert found.settings.name == "blog" and found.last == T.replace(second=0)
    assert view.edited(db, "nobody").problem == "No site named 'nobody' is registered."
    assert "invalid site" in view.edited(db, "no/such").problem
    assert view.script_url("https://stats.example.com/") == "https://stats.example.com/hit.js"
