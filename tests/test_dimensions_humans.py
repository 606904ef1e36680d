"""Humans by default: the counters count bots apart (``b``), so every
dimension reads humans = all - bots, visitors per value from the humans' sketches, the
filtered series too; old documents without the split still read (their bots counted
as humans, and said); the bot counters stay within the caps."""

from __future__ import annotations

import datetime as dt
import random
import string
from collections import Counter
from pathlib import Path

import pytest
from dimkit import BOTS, GOOGLEBOT, LINES, TOTAL, ingest_sample

from queries.counting import DimensionRecorder
from queries.dimensions import CAPS, classify, reads, sketches
from queries.dimensions.counters import COLLECTIONS, MONTHLY

SITE = "s"
PANELS = ("referrer", "status", "browser", "os", "device", "country", "bot", "kind",
          "utm_source", "notfound")


def _sample(db, tmp: Path) -> tuple:
    start = ingest_sample(db, SITE, tmp)
    day = start.replace(hour=0)
    return db, (day, day + dt.timedelta(days=1))


@pytest.fixture(scope="module")
def sample(module_db, tmp_path_factory):
    """The sample ingested once per backend, for the tests that only read it."""
    return _sample(module_db, tmp_path_factory.mktemp("sample"))


@pytest.fixture
def own_sample(db, tmp_path):
    """The sample in a test's own database, which it rewrites."""
    return _sample(db, tmp_path)


def expected(dim: str, humans: bool) -> Counter:
    """The sample's hits per value, classified line by line (not from any counter)."""
    counts: Counter = Counter()
    address = 0
    for count, path, status, referrer, agent in LINES:
        for _ in range(count):
            address += 1                                 # as dimkit.write_log numbers them
            if humans and agent == GOOGLEBOT:
                continue
            dims = classify(SITE, path, status=status, agent=agent,
                            referrer_url=None if referrer == "-" else referrer,
                            address=f"81.{address // 250}.{address % 250}.9")
            counts.update(value for name, value in dims.values if name == dim)
    return counts


def as_counts(frame) -> Counter:
    return Counter(dict(zip(frame["value"], frame["hits"].astype(int), strict=True)))


@pytest.mark.parametrize("dim", PANELS)
def test_every_dimension_counts_humans_apart(sample, dim):
    db, day = sample
    everyone = reads.breakdown(db, SITE, dim, *day)
    humans = reads.breakdown(db, SITE, dim, *day, humans=True)
    assert as_counts(everyone) == expected(dim, humans=False)
    assert as_counts(humans) == expected(dim, humans=True)
    assert humans.attrs["unsplit"] == 0 and humans.attrs["note"] == ""
    if dim not in ("notfound", "bot"):
        assert int(everyone["hits"].sum()) - int(humans["hits"].sum()) == BOTS


def test_visitors_per_value_leave_bots_out(sample):
    db, day = sample
    # One address per line: (direct) has 10 + 5 + 8 human visitors and 15 Googlebots.
    humans = reads.breakdown(db, SITE, "referrer", *day, humans=True).set_index("value")
    everyone = reads.breakdown(db, SITE, "referrer", *day).set_index("value")
    assert humans.loc["(direct)", "visitors"] == 23
    assert everyone.loc["(direct)", "visitors"] == 23 + BOTS
    assert reads.breakdown(db, SITE, "bot", *day).set_index("value").loc[
        "human", "visitors"] == TOTAL - BOTS


def test_filtered_series_and_404_list_count_humans(sample):
    db, day = sample
    args = (db, SITE, "browser", "Googlebot", *day, "hour")
    assert int(reads.filtered_series(*args)["hits"].sum()) == BOTS
    assert int(reads.filtered_series(*args, humans=True)["hits"].sum()) == 0
    direct = (db, SITE, "referrer", "(direct)", *day, "day")
    assert int(reads.filtered_series(*direct, humans=True)["hits"].sum()) == 23
    assert int(reads.filtered_series(*direct)["hits"].sum()) == 23 + BOTS
    assert reads.top_not_found(db, SITE, *day, humans=True)["path"].tolist() == ["/missing"]
    # The bot dimension itself (its fields overlap v.bot, which MongoDB would refuse).
    bots = (db, SITE, "bot", "bot", *day, "day")
    assert int(reads.filtered_series(*bots)["hits"].sum()) == BOTS
    assert int(reads.filtered_series(*bots, humans=True)["hits"].sum()) == 0


def test_a_daily_filtered_series_counts_only_the_hours_of_its_range(sample):
    """The sample's hits fall in 12:00-13:00: a day bucket the range cuts reads its
    hours (a week ago until the same hour, set against today so far)."""
    db, (day, _) = sample
    hour = dt.timedelta(hours=1)

    def hits(start, end):
        return int(reads.filtered_series(db, SITE, "bot", "human", start, end, "day")
                   ["hits"].sum())

    assert hits(day, day + 12 * hour) == 0
    assert hits(day, day + 12.5 * hour) == hits(day, day + 24 * hour) == TOTAL - BOTS
    assert hits(day + 13 * hour, day + 48 * hour) == 0


def test_documents_without_the_split_still_read_and_say_so(own_sample):
    """Counters and sketches as stored before bots were counted apart: humans read as
    everyone, with the bot hits that could not be left out reported."""
    db, day = own_sample
    for coll in COLLECTIONS:
        db[coll].update_many({}, {"$unset": {"b": "", "bh": ""}})
    for doc in db[sketches.VALUES].find():
        items = [{"v": i["v"], "s": i["s"]} for i in doc["values"]]
        db[sketches.VALUES].update_one({"_id": doc["_id"]}, {"$set": {"values": items}})
    humans = reads.breakdown(db, SITE, "referrer", *day, humans=True)
    assert as_counts(humans) == expected("referrer", humans=False)
    assert humans.attrs["unsplit"] == BOTS and "15 bot hits" in humans.attrs["note"]
    series = reads.filtered_series(db, SITE, "referrer", "(direct)", *day, "day",
                                   humans=True)
    assert int(series["hits"].sum()) == 23 + BOTS and series.attrs["unsplit"] == BOTS
    # Half-old: a later flush of a splitting recorder adds bh for its own bots only.
    recorder = DimensionRecorder(db, flush_interval=3600)
    bot = classify(SITE, "/", status=200, agent=GOOGLEBOT, address="81.9.9.9")
    recorder.record(SITE, "/", day[0] + dt.timedelta(hours=12), bot, n=4)
    recorder.close()
    humans = reads.breakdown(db, SITE, "referrer", *day, humans=True)
    assert humans.attrs["unsplit"] == BOTS
    assert as_counts(humans)["(direct)"] == 23 + BOTS


def test_bot_counters_stay_within_the_caps(db):
    """A flood of distinct referrers from bots and humans: ``b`` holds only values ``v``
    kept (the rest under (other) in both), never more than ``v`` counts, and humans add
    up to the hits minus the bot hits."""
    rng = random.Random(3)
    recorder = DimensionRecorder(db, flush_interval=3600)
    t0 = dt.datetime(2026, 3, 14, 9, tzinfo=dt.UTC)
    for flush in range(2):
        for i in range(700):
            word = "".join(rng.choices(string.ascii_lowercase, k=10))
            agent = GOOGLEBOT if i % 3 == 0 else f"Mozilla/5.0 ({word}) Firefox/{i % 90}.0"
            dims = classify("f", "/", status=200, referrer_url=f"https://{word}.example/",
                            agent=agent, address=f"8.8.{flush}.{i % 250}")
            recorder.record("f", "/", t0 + dt.timedelta(minutes=flush * 70), dims)
        recorder.flush()
    recorder.close()
    for coll in COLLECTIONS:
        for doc in db[coll].find():
            for dim, values in doc["b"].items():
                assert set(values) <= set(doc["v"][dim]), (coll, dim)
                assert len(values) <= CAPS[dim]
                assert all(n <= doc["v"][dim][name] for name, n in values.items())
            assert doc["bh"] == doc["v"]["bot"]["bot"] == sum(doc["b"]["referrer"].values())
    month = db[MONTHLY].find_one()
    assert month["b"]["referrer"]["(other)"] > 0
    span = (t0.replace(hour=0), t0.replace(hour=0) + dt.timedelta(days=1))
    humans = reads.breakdown(db, "f", "referrer", *span, humans=True)
    assert int(humans["hits"].sum()) == month["hits"] - month["bh"]
    assert month["hits"] == 1400 and month["bh"] >= 2 * 234   # + random agents saying bot
    assert len(humans) <= CAPS["referrer"]


def test_weighted_hits_count_once_each(db):
    """Hits recorded with ``n`` (a backfill's hour, a beacon batch) beside single hits:
    every pair counts ``n``, bots apart, without repeating the values ``n`` times."""
    recorder = DimensionRecorder(db, flush_interval=3600)
    t0 = dt.datetime(2026, 3, 14, 9, tzinfo=dt.UTC)
    human = classify("w", "/", status=200, agent="Mozilla/5.0 Firefox/120.0",
                     address="8.8.8.8")
    bot = classify("w", "/", status=200, agent=GOOGLEBOT, address="8.8.4.4")
    recorder.record("w", "/", t0, human, n=3_000_000)
    recorder.record("w", "/", t0, human)
    recorder.record("w", "/", t0, bot, n=2_000_000)
    recorder.close()
    doc = db[MONTHLY].find_one()
    assert doc["hits"] == 5_000_001 and doc["bh"] == 2_000_000
    assert doc["v"]["status"] == {"200": 5_000_001}
    assert doc["b"]["status"] == {"200": 2_000_000}
    span = (t0.replace(hour=0), t0.replace(hour=0) + dt.timedelta(days=1))
    humans = reads.breakdown(db, "w", "status", *span, humans=True)
    assert as_counts(humans) == {"200": 3_000_001}
    assert humans["visitors"].tolist() == [1]


HUMAN_AGENT = "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0"


def record_hours(db, day: dt.datetime, hits: list[tuple[int, str, str]]) -> None:
    """Hits ``(hour, address, agent)`` of ``day``, one flush per hour (as a server's
    recorder flushes), so each hour's sketches are saved on their own."""
    with DimensionRecorder(db, flush_interval=3600) as recorder:
        for hour, address, agent in hits:
            recorder.record(SITE, "/", day.replace(hour=hour),
                            classify(SITE, "/", agent=agent, address=address))
            recorder.flush()


def test_human_visitors_of_a_range_within_a_day_are_its_hours(db):
    """The whole-site sketches keep the humans apart, so a range cut within a day counts
    its own hours' human visitors: the ``bot = human`` value's sketches are per day, the
    whole day's six, bounded by the range's four human hits."""
    day = dt.datetime(2026, 3, 14, tzinfo=dt.UTC)
    record_hours(db, day, [(10, "81.0.0.1", HUMAN_AGENT), (10, "81.0.0.2", HUMAN_AGENT),
                           (10, "66.249.66.1", GOOGLEBOT), (11, "81.0.0.3", HUMAN_AGENT),
                           (11, "81.0.0.1", HUMAN_AGENT)]
                 + [(14, f"81.0.0.{i}", HUMAN_AGENT) for i in (4, 5, 6)])
    morning = (day.replace(hour=10), day.replace(hour=12))
    assert reads.visitors(db, SITE, *morning, humans=True).n == 3
    assert reads.visitors(db, SITE, *morning).n == 4
    assert reads.visitors(db, SITE, day, day + dt.timedelta(days=1), humans=True).n == 6
    assert reads.breakdown(db, SITE, "bot", *morning).set_index("value").loc[
        "human", "visitors"] == 4


def test_compaction_keeps_the_human_visitors_and_old_documents_read_everyone(db):
    day = dt.datetime(2026, 3, 14, tzinfo=dt.UTC)
    for address, agent in (("81.0.0.1", HUMAN_AGENT), ("66.249.66.1", GOOGLEBOT),
                           ("81.0.0.2", HUMAN_AGENT)):
        record_hours(db, day, [(10, address, agent)])       # a recorder (owner) each
    hour = (day.replace(hour=10), day.replace(hour=11))
    assert db[sketches.HOURLY].count_documents({}) == 3
    assert sketches.compact_all(db, day + dt.timedelta(days=40)) > 0
    assert db[sketches.HOURLY].count_documents({}) == 1
    assert reads.visitors(db, SITE, *hour, humans=True).n == 2
    assert reads.visitors(db, SITE, *hour).n == 3
    db[sketches.HOURLY].update_many({}, {"$unset": {"h": ""}})   # written before ``h``
    assert reads.visitors(db, SITE, *hour, humans=True).n == 3
