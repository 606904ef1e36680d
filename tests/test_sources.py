"""A site's logs beside its beacon: the primary source (the first that fed a site) is
the one counted, the other's hits kept apart (``events.apart``), never counted twice;
the Sources view's figures per page and day (``queries.reads.sources``)."""

from __future__ import annotations

import datetime as dt

import pytest
from click.testing import CliRunner
from logkit import AGENT, write_log
from logkit import ingest as _ingest

import queries
from dashboard.cli import main
from queries.events import apart
from queries.events import collection as events
from queries.events.writer import EventWriter
from queries.reads.sources import compare
from queries.stats import schema
from queries.stats.sites import (
    primary_source,
    register,
    register_synthetic,
    site_settings,
    update_site,
)

DAY = dt.datetime(2015, 5, 17, tzinfo=dt.UTC)
HUMAN = AGENT
GPTBOT = ("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; "
          "+https://openai.com/gptbot)")
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
# (visitor, minute, page, agent): three people read /a, one of them /b; two bots.
LOG = [(1, 600, "/a", HUMAN), (2, 610, "/a", HUMAN), (3, 620, "/a", HUMAN),
       (1, 630, "/b", HUMAN), (9, 640, "/a", GPTBOT), (8, 650, "/b", GOOGLEBOT),
       (1, 660, "/style.css", HUMAN)]


def _log(tmp_path, lines=LOG):
    return write_log(tmp_path / "access.log", DAY, lines)


def _beacon(db, hits, collection_writer):
    """Beacon hits ``(visitor, minute, page)`` as the beacon keeps them."""
    for who, minute, page in hits:
        collection_writer.add({"time": DAY + dt.timedelta(minutes=minute), "site": "s",
                               "host": f"203.0.113.{who}", "method": "POST", "path": page,
                               "query": "", "status": None, "bytes": 0, "referrer": None,
                               "user_agent": HUMAN})
    collection_writer.flush()


def test_the_first_source_is_the_primary_one_and_stays(db):
    register(db, "s", "admin")
    assert site_settings(db, "s").primary_source is None
    assert primary_source(db, "s", "log") == "log"
    assert primary_source(db, "s", "beacon") == "log"
    update_site(db, "s", primary_source="beacon")
    assert primary_source(db, "s", "log") == "beacon"
    with pytest.raises(queries.HitboardError, match="primary source is one of"):
        update_site(db, "s", primary_source="email")
    register(db, "old", "ingest")         # a store from before: its logs fed it
    assert primary_source(db, "old", "beacon") == "log"


def test_a_log_of_a_site_counting_its_beacon_is_kept_apart_and_counted_nowhere(db, tmp_path):
    register(db, "s", "admin")
    update_site(db, "s", primary_source="beacon")
    summary = _ingest(db, _log(tmp_path))
    assert summary.apart == {"s": len(LOG)} and summary.hits == 0
    assert queries.list_pages(db, "s") == [] and db[schema.EVENTS].count_documents({}) == 0
    assert sum(b["n"] for b in db[apart.COLLECTION].find()) == len(LOG)
    _ingest(db, _log(tmp_path))                         # read again: stored once
    assert sum(b["n"] for b in db[apart.COLLECTION].find()) == len(LOG)
    stream = int(db[apart.COLLECTION].find_one()["stream"], 16)
    events.forget(db, stream, 0)                        # a pass resumed from its start
    assert db[apart.COLLECTION].count_documents({}) == 0


def test_the_sources_view_sets_the_log_beside_the_beacon(db, tmp_path, frozen_clock):
    register(db, "s", "admin")
    _ingest(db, _log(tmp_path))                         # the log first: it is counted
    assert site_settings(db, "s").primary_source == "log"
    _beacon(db, [(1, 600, "/a"), (2, 610, "/a"), (1, 630, "/b")], apart.writer(db))
    found = compare(db, "s", DAY, DAY + dt.timedelta(days=1))
    rows = {row.page: (row.log_pageviews, row.beacon_pageviews, row.difference,
                       row.log_bots, row.ai_crawlers, row.without_script)
            for row in found.rows.itertuples()}
    assert rows == {"/a": (3, 2, 1, 1, 1, 1), "/b": (1, 1, 0, 1, 0, 0)}
    assert found.totals["log_pageviews"] == 4 and found.totals["beacon_pageviews"] == 3
    assert found.share == pytest.approx(1 / 4) and found.primary == "log"
    assert db[apart.COLLECTION].count_documents({}) > 0
    later = dt.datetime.now(dt.UTC) + dt.timedelta(days=60)
    events.expire(db, 30, rolled_up_until=later, now=later)  # they expire with the events
    assert db[apart.COLLECTION].count_documents({}) == 0


def test_the_sources_view_reads_days_of_the_zone(db, tmp_path):
    register(db, "s", "admin")
    _ingest(db, _log(tmp_path, [(1, 23 * 60 + 50, "/a", HUMAN)]))   # 23:50 UTC
    found = compare(db, "s", DAY, DAY + dt.timedelta(days=2), tz="Asia/Kolkata")
    assert found.rows["day"].tolist() == [dt.date(2015, 5, 18)]           # 05:20 there
    assert found.share is None                                          # no beacon


def test_ingest_says_which_lines_it_kept_apart(tmp_path):
    store = str(tmp_path / "store")
    runner = CliRunner()
    assert runner.invoke(main, ["site", "add", "s", "--store", store]).exit_code == 0
    assert runner.invoke(main, ["site", "set", "s", "--primary-source", "beacon",
                                "--store", store]).exit_code == 0
    result = runner.invoke(main, ["ingest", str(_log(tmp_path)), "--site", "s",
                                  "--store", store])
    assert result.exit_code == 0, result.output
    assert f"{len(LOG)} lines of s" in result.output and "Sources" in result.output
    listed = runner.invoke(main, ["site", "list", "--store", store])
    assert "counts its beacon" in listed.output


def test_generator_events_are_neither_source(db):
    register(db, "s", "admin")
    writer = EventWriter(db)
    writer.add({"time": DAY, "site": "s", "host": "192.0.2.1", "method": "GET", "path": "/a",
                "query": "", "status": 200, "bytes": 1, "referrer": "-", "user_agent": HUMAN})
    writer.flush()
    found = compare(db, "s", DAY, DAY + dt.timedelta(days=1))
    assert found.generator == 1 and found.rows.empty


def test_chosen_pages_narrow_every_figure_but_not_who_ran_the_script(db, tmp_path):
    register(db, "s", "admin")
    _ingest(db, _log(tmp_path))
    _beacon(db, [(1, 600, "/a")], apart.writer(db))      # visitor 1 ran it, on /a only
    found = compare(db, "s", DAY, DAY + dt.timedelta(days=1), pages=["/b"])
    assert found.rows["page"].tolist() == ["/b"]
    assert found.totals == {"log_pageviews": 1, "beacon_pageviews": 0, "difference": 1,
                            "log_bots": 1, "ai_crawlers": 0, "without_script": 0}
    assert found.share is None
    with pytest.raises(queries.HitboardError):
        compare(db, "s", DAY, DAY + dt.timedelta(days=1), pages=["/a\x01"])


def test_the_view_names_the_source_a_site_was_fed_by_before_any_asked(db, tmp_path):
    """The load generator's sites never record a primary source: Sources said "Nothing
    has fed shop.example yet" beside its hits; a store older than primary sources
    counted its log."""
    register_synthetic(db, ["shop.example"])
    writer = EventWriter(db)
    writer.add({"time": DAY, "site": "shop.example", "host": "192.0.2.1", "method": "GET",
                "path": "/a", "query": "", "status": 200, "bytes": 1, "referrer": "-",
                "user_agent": HUMAN})
    writer.flush()
    assert site_settings(db, "shop.example").primary_source is None
    assert compare(db, "shop.example", DAY, DAY + dt.timedelta(days=1)).primary == "generator"
    _ingest(db, _log(tmp_path), site="old")
    db[schema.SITES].delete_one({"_id": "old"})            # as a store from before kept it
    assert compare(db, "old", DAY, DAY + dt.timedelta(days=1)).primary == "log"
    assert compare(db, "nobody", DAY, DAY + dt.timedelta(days=1)).primary is None
