"""The count step every source calls: rows in, the recorders' pending units out, the
same as each hit classified and recorded one by one."""

import datetime as dt

import polars as pl

from queries.counting.count import CountStep
from queries.dimensions import classify
from queries.dimensions.classify import is_bot_agent
from queries.dimensions.counters import DimensionCounts, hour_unit
from queries.loadgen.visitors import SyntheticVisitors, visit_rows

T0 = dt.datetime(2026, 11, 21, 10, 59, 30, tzinfo=dt.UTC)
CHROME = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36"
BOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"


def one_by_one(cells):
    """The units of ``(site, page, when, visits)`` cells, each visit classified alone."""
    units = {}
    for site, page, when, visits in cells:
        for v in visits:
            dims = classify(site, page, query=v.query, status=v.status, referrer_url=v.referrer,
                            agent=v.agent, address=v.host, country=v.country, vhost=site)
            DimensionCounts.add(units.setdefault(hour_unit(site, when), ({}, set())), dims,
                                v.share)
    return units


def test_weighted_visits_with_drawn_countries_count_as_each_classified_alone():
    visitors = SyntheticVisitors(7)
    cells = [(site, page, T0 + dt.timedelta(minutes=minute), visitors.draw(site, n))
             for site, page, minute, n in (("a.example", "/", 0, 40), ("a.example", "/x", 1, 7),
                                           ("b.example", "/", 0, 90))]
    counted = CountStep().count(visit_rows(cells))
    assert counted.units == one_by_one(cells)
    assert counted.total == 137 == sum(counted.sites.values())
    assert counted.hits[("a.example", "/", 2026, 11, 21)] == {659: 40}
    assert counted.hits[("a.example", "/x", 2026, 11, 21)] == {660: 7}
    bots = sum(v.share for _, _, _, visits in cells for v in visits if is_bot_agent(v.agent))
    assert bots
    assert sum(n for minutes in counted.bots.values() for n in minutes.values()) == bots


def test_rows_without_weights_count_one_hit_each_and_bots_apart():
    rows = pl.DataFrame({
        "site": ["s", "s", "s"], "page": ["/", "/", "/b"],
        "time": [T0, T0, T0 + dt.timedelta(days=1)], "user_agent": [CHROME, BOT, None],
        "referrer": [None, "https://r.example/", None], "vhost": [None] * 3,
        "query": ["", "utm_source=x", ""], "host": ["192.0.2.1", "192.0.2.2", None],
        "path": ["/", "/", "/b"], "status": [None, None, 404]},
        schema_overrides={"time": pl.Datetime("us", "UTC"), "vhost": pl.String,
                          "status": pl.Int64})
    counted = CountStep().count(rows)
    assert counted.hits == {("s", "/", 2026, 11, 21): {659: 2}, ("s", "/b", 2026, 11, 22): {659: 1}}
    assert counted.bots == {("s", "/", 2026, 11, 21): {659: 1}}
    assert (counted.first, counted.last) == (T0, T0 + dt.timedelta(days=1))
    hits = sum(sum(unit[0].values()) for unit in counted.units.values())
    assert hits == 3 and len(counted.units) == 2
    assert CountStep(unknown_bots=True).count(rows).bots[("s", "/b", 2026, 11, 22)] == {659: 1}
    assert CountStep(dimensions=False).count(rows).units == {}


class Taken:
    """A recorder that keeps what the count step hands it."""

    def __init__(self):
        self.bots = {}

    def add_pending(self, pending, bots=None):
        for key, minutes in (bots or {}).items():
            for minute, n in minutes.items():
                self.bots[key, minute] = self.bots.get((key, minute), 0) + n


def test_a_beacon_batch_counts_agentless_hits_as_bots_only_where_its_site_said_so(embedded_db):
    from queries.journal.batch import Writers
    from queries.journal.records import Pageview

    writers = Writers(embedded_db, "jtest-1")
    writers.close()
    writers.stats = writers.dims = Taken()
    views = [Pageview(T0, site, "/", "", None, "192.0.2.9", "GET", None, None, flag)
             for site, flag in (("a", True), ("b", False), ("a", True))]
    writers.count(views)
    assert writers.stats.bots == {(("a", "/", 2026, 11, 21), 659): 2}
    writers.count(views[1:2])
    assert writers.stats.bots == {(("a", "/", 2026, 11, 21), 659): 2}
