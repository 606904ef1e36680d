"""Visitors read from sketches: one figure for one range, whatever reads it; an estimate
says so (its error); a value's visitors agree with the whole site's where they are the
same people (a value holding every hit, the values a visitor has one of)."""

from __future__ import annotations

import datetime as dt
import random

import pytest

from queries.counting import DimensionRecorder
from queries.dimensions import classify, reads

SITE = "shop.example"
DAY = (dt.datetime(2026, 3, 14, tzinfo=dt.UTC), dt.datetime(2026, 3, 15, tzinfo=dt.UTC))
MONTH = (dt.datetime(2026, 3, 1, tzinfo=dt.UTC), dt.datetime(2026, 4, 1, tzinfo=dt.UTC))
AGENTS = {
    "desktop": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
               "Chrome/126.0 Safari/537.36",
    "mobile": "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like "
              "Gecko) Chrome/126.0 Mobile Safari/537.36",
    "tablet": "Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, "
              "like Gecko) Version/17.0 Mobile/15E148 Safari/604.1",
}
PEOPLE = 2_500          # past the size a whole-site sketch counts exactly (1,536)


@pytest.fixture(scope="module")
def crowd(module_db):
    """``PEOPLE`` visitors, a few hits each between 01:00 and 23:00 of one day, no
    referrer, one of three devices each."""
    rng = random.Random(45)
    recorder = DimensionRecorder(module_db, flush_interval=3600)
    for person in range(PEOPLE):
        device = ("desktop", "desktop", "mobile", "tablet")[person % 4]
        for _ in range(rng.randint(1, 3)):
            when = DAY[0] + dt.timedelta(hours=1, seconds=rng.randrange(22 * 3600))
            dims = classify(SITE, "/", agent=AGENTS[device], referrer_url="-",
                            address=f"10.{person // 65536}.{person // 256 % 256}.{person % 256}")
            recorder.record(SITE, "/", when, dims)
    recorder.close()
    return module_db


def test_one_range_gives_one_figure_whatever_reads_it(crowd):
    """The day's people from its day sketch, from its 22 hours' sketches, from the
    month's sketch: the same figure (they differed by a visitor or more), and it says
    it is an estimate, within its error of the truth."""
    day = reads.visitors(crowd, SITE, *DAY, humans=True)
    hours = reads.visitors(crowd, SITE, DAY[0] + dt.timedelta(hours=1),
                           DAY[0] + dt.timedelta(hours=23), humans=True)
    month = reads.visitors(crowd, SITE, *MONTH, humans=True)
    assert day.n == hours.n == month.n
    assert day.error == hours.error == month.error > 0
    assert abs(day.n - PEOPLE) <= day.error


def test_a_value_holding_every_hit_has_the_sites_visitors(crowd):
    """No referrer on any hit: "(direct)" holds every hit, so its visitors are the
    KPI's (its own, smaller sketch said otherwise)."""
    kpi = reads.visitors(crowd, SITE, *DAY, humans=True)
    for dim in ("referrer", "utm_source", "status", "bot"):
        frame = reads.breakdown(crowd, SITE, dim, *DAY, humans=True)
        assert frame[["visitors", "visitors_error"]].values.tolist() == [[kpi.n, kpi.error]]


def test_the_values_a_visitor_has_one_of_share_the_sites_visitors(crowd):
    """Each visitor has one device: the devices' visitors add up to the KPI's, each
    marked as estimated, each near its truth."""
    kpi = reads.visitors(crowd, SITE, *DAY, humans=True)
    frame = reads.breakdown(crowd, SITE, "device", *DAY, humans=True)
    assert int(frame["visitors"].sum()) == kpi.n
    truth = {"desktop": PEOPLE // 2, "mobile": PEOPLE // 4, "tablet": PEOPLE // 4}
    for row in frame.itertuples():
        assert row.visitors_error > 0
        assert abs(row.visitors - truth[row.value]) <= 2 * row.visitors_error
    everyone = reads.breakdown(crowd, SITE, "device", *DAY)
    assert int(everyone["visitors"].sum()) == reads.visitors(crowd, SITE, *DAY).n


def test_an_estimated_value_has_no_more_visitors_than_the_site(module_db):
    """1,000 people (the site's sketch counts them exactly), one of whom comes once more
    from a news site with a campaign: "(direct)" holds all but that hit, and its own
    sketch said 1,006 visitors."""
    site = "one-more.example"
    recorder = DimensionRecorder(module_db, flush_interval=3600)
    for person in range(1_000):
        recorder.record(site, "/", DAY[0] + dt.timedelta(hours=1 + person % 22), classify(
            site, "/", agent=AGENTS["desktop"], referrer_url="-", address=f"10.0.{person // 256}"
            f".{person % 256}"))
    recorder.record(site, "/", DAY[0] + dt.timedelta(hours=2), classify(
        site, "/", status=404, agent=AGENTS["desktop"], query="utm_source=news",
        referrer_url="https://news.example/", address="10.0.0.0"))
    recorder.close()
    assert reads.visitors(module_db, site, *DAY, humans=True) == (1_000, True, DAY, 0)
    for dim in ("referrer", "status", "utm_source"):
        top = reads.breakdown(module_db, site, dim, *DAY, humans=True).iloc[0]
        assert top["hits"] == 1_000 and top["visitors_error"] > 0
        assert top["visitors"] <= 1_000, dim


def test_few_visitors_are_exact(db):
    recorder = DimensionRecorder(db, flush_interval=3600)
    for person in range(40):
        recorder.record(SITE, "/", DAY[0] + dt.timedelta(hours=person % 24), classify(
            SITE, "/", agent=AGENTS["mobile"], address=f"192.0.2.{person}"))
    recorder.close()
    assert reads.visitors(db, SITE, *DAY) == (40, True, DAY, 0)
    frame = reads.breakdown(db, SITE, "device", *DAY)
    assert frame[["value", "visitors", "visitors_error"]].values.tolist() == [["mobile", 40, 0]]


def test_the_only_404_path_has_its_own_visitors_not_the_sites(db):
    """``notfound`` counts the 404s alone: its only path holds every hit of the
    dimension, not of the range, and had the site's 40 visitors beside its 3 hits (the
    CLI's fuzz, seed 66: "/missing,16,71")."""
    recorder = DimensionRecorder(db, flush_interval=3600)
    for person in range(40):
        recorder.record(SITE, "/", DAY[0] + dt.timedelta(hours=person % 24), classify(
            SITE, "/", status=404 if person < 3 else 200, agent=AGENTS["mobile"],
            address=f"192.0.2.{person}"))
    recorder.close()
    frame = reads.breakdown(db, SITE, "notfound", *DAY)
    assert frame[["value", "hits", "visitors"]].values.tolist() == [["/", 3, 3]]
