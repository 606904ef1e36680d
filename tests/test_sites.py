"""The site registry: synthetic sites are tagged and can be hidden."""

import datetime as dt

import pytest

import queries
from queries import InvalidSiteError
from queries.stats.sites import claim_demo_backfill

TS = dt.datetime(2026, 11, 21, 12, tzinfo=dt.UTC)


def test_synthetic_sites_are_registered_and_hidden_on_request(db):
    queries.log_hit(db, TS, "real-site", "/")
    assert queries.register_synthetic(db, ["shop.example", "blog.example"]) == [
        "shop.example", "blog.example"]
    queries.log_hit(db, TS, "shop.example", "/")
    assert queries.synthetic_sites(db) == ["blog.example", "shop.example"]
    assert queries.list_sites(db) == ["real-site", "shop.example"]
    assert queries.list_sites(db, include_synthetic=False) == ["real-site"]


def test_registering_again_is_harmless(db):
    queries.register_synthetic(db, ["shop.example"])
    queries.log_hit(db, TS, "shop.example", "/")
    queries.register_synthetic(db, ["shop.example"])
    assert queries.synthetic_sites(db) == ["shop.example"]


def test_a_site_with_real_traffic_is_never_made_synthetic(db):
    queries.log_hit(db, TS, "shop.example", "/")
    with pytest.raises(InvalidSiteError, match="real traffic"):
        queries.register_synthetic(db, ["blog.example", "shop.example"])
    assert queries.synthetic_sites(db) == []


def test_invalid_site_names_are_refused(db):
    with pytest.raises(InvalidSiteError):
        queries.register_synthetic(db, ["no spaces"])


def test_only_the_first_claim_of_the_demo_backfill_wins(db):
    assert claim_demo_backfill(db)
    assert not claim_demo_backfill(db)
