"""DimensionRecorder: safe field names, bounded documents, exactly-once counters,
race-free visitor sketches and their compaction, on every backend present."""

from __future__ import annotations

import datetime as dt
import random
import string
from pathlib import Path

import pytest

from queries import HitboardError
from queries.counting import DimensionRecorder
from queries.dimensions import CAPS, classify, reads, sketches
from queries.dimensions.counters import COLLECTIONS, DAILY, HOURLY, MONTHLY, hour_unit
from queries.dimensions.tally import LogTally
from queries.ingest.logformat import LineParser, columns

SITE = "shop.example"
SHARED_LOG = Path(__file__).resolve().parents[2] / "shared" / "data" / "apache_combined_2015.log"
T0 = dt.datetime(2026, 3, 14, 9, 30, tzinfo=dt.UTC)
DAY = (dt.datetime(2026, 3, 14, tzinfo=dt.UTC), dt.datetime(2026, 3, 15, tzinfo=dt.UTC))
CHROME = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
          "Chrome/126.0 Safari/537.36")


def _recorder(db, **kwargs):
    return DimensionRecorder(db, flush_interval=3600, **kwargs)


def _names(value):
    """Every field name in a document, nested ones included."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield key
            yield from _names(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _names(inner)


def test_hostile_values_are_stored_escaped_and_read_back(db):
    recorder = _recorder(db)
    huge_agent = CHROME + " " + "A" * 10_240
    hits = [
        dict(query="utm_source=$where&utm_medium=a.b.c&utm_campaign=%24x.%00y",
             referrer_url="http://news.example/", agent=huge_agent, address="2001:4860::1"),
        dict(referrer_url="not a url at all", agent="", address="fe80::1%eth0"),
        dict(referrer_url="http://$evil.example./", agent=None, address="host.name.example"),
    ]
    for kw in hits:
        recorder.record(SITE, "/p", T0, classify(SITE, "/p", status=200, **kw))
    recorder.close()
    for coll in COLLECTIONS:
        for doc in db[coll].find():
            for name in _names({k: v for k, v in doc.items() if k != "_id"}):
                assert "." not in name and not name.startswith("$") and "\0" not in name
            assert len(str(doc)) < 20_000            # the 10 KB agent is not stored
    source = reads.breakdown(db, SITE, "utm_source", *DAY)
    assert set(source["value"]) == {"$where", "(none)"}
    campaign = reads.breakdown(db, SITE, "utm_campaign", *DAY)
    assert "$x.\x00y" in set(campaign["value"])
    medium = reads.breakdown(db, SITE, "utm_medium", *DAY)
    assert "a.b.c" in set(medium["value"])
    referrers = dict(zip(*(reads.breakdown(db, SITE, "referrer", *DAY)[c]
                           for c in ("value", "hits")), strict=True))
    assert referrers == {"news.example": 1, "(invalid)": 1, "$evil.example": 1}
    countries = reads.breakdown(db, SITE, "country", *DAY)
    assert dict(zip(countries["value"], countries["hits"], strict=True)) == {
        "US": 1, "unknown": 2}
    series = reads.filtered_series(db, SITE, "utm_source", "$where", *DAY, "hour")
    assert int(series["hits"].sum()) == 1


def test_a_flood_of_random_values_cannot_grow_a_document_past_its_caps(db):
    rng = random.Random(7)
    recorder = _recorder(db)
    total = 0
    for flush in range(3):
        for _ in range(1500):
            word = "".join(rng.choices(string.ascii_lowercase, k=12))
            dims = classify(SITE, f"/{word}", status=rng.choice([200, 404, 777]),
                            referrer_url=f"https://{word}.example/",
                            agent=f"Mozilla/5.0 ({word}) Gecko/{rng.randint(1, 10**6)} "
                                  f"{word.title()}/{rng.randint(1, 99)}.0",
                            query=f"utm_campaign={word}", address=f"8.8.{flush}.{_ % 250}")
            recorder.record(SITE, f"/{word}", T0 + dt.timedelta(minutes=flush * 90), dims)
            total += 1
        recorder.flush()
    recorder.close()
    for coll in COLLECTIONS:
        for doc in db[coll].find():
            for dim, values in doc["v"].items():
                assert len(values) <= CAPS[dim], (coll, dim, len(values))
                if dim != "notfound":                    # only 404s count there
                    assert sum(values.values()) == doc["hits"], (coll, dim)
    month = db[MONTHLY].find_one()
    assert month["hits"] == total
    assert month["v"]["referrer"]["(other)"] > 0
    frame = reads.breakdown(db, SITE, "referrer", *DAY)
    assert frame["value"].iloc[-1] == "(other)" and int(frame["hits"].sum()) == total
    per_bucket: dict[tuple, set] = {}
    for doc in db[sketches.VALUES].find():
        key = (doc["level"], doc["metadata"]["date"], doc["d"])
        per_bucket.setdefault(key, set()).update(item["v"] for item in doc["values"])
    assert per_bucket and all(len(v) <= CAPS[k[2]] for k, v in per_bucket.items())


def test_a_resent_flush_counts_once(db):
    """Two recorders with one writer id and flush number: the second send (a crash's
    re-run) is recognised by the guard; its sketch adds nothing to the union."""
    dims = classify(SITE, "/", status=200, agent=CHROME, address="8.8.8.8")
    for _ in range(2):
        recorder = _recorder(db, writer="ingest-test-dims")
        recorder.record(SITE, "/", T0, dims, n=5)
        recorder.flush(seq=1)
        recorder.close()
    assert db[DAILY].find_one()["hits"] == 5
    assert db[HOURLY].find_one()["v"]["status"] == {"200": 5}
    assert db[sketches.DAILY].count_documents({}) == 2       # one per process: a union
    assert reads.visitors(db, SITE, *DAY).n == 1


def test_one_process_keeps_one_sketch_document_per_bucket(db):
    recorder = _recorder(db)
    for i in range(20):
        dims = classify(SITE, "/", agent=CHROME, address=f"8.8.8.{i + 1}")
        recorder.record(SITE, "/", T0, dims)
        recorder.flush()
    recorder.close()
    for coll in (sketches.HOURLY, sketches.DAILY, sketches.MONTHLY):
        assert db[coll].count_documents({}) == 1
    assert db[sketches.VALUES].count_documents({}) == 2 * 12    # day and month, 12 dims
    assert reads.visitors(db, SITE, *DAY).n == 20


def test_concurrent_writers_lose_no_visitor_and_compaction_keeps_the_union(db):
    first, second = _recorder(db), _recorder(db)
    for i in range(300):
        dims = classify(SITE, "/", agent=CHROME, address=f"8.8.{i // 250}.{i % 250}")
        (first if i % 2 else second).record(SITE, "/", T0, dims)
        if i < 100:                                     # both see the first hundred
            (second if i % 2 else first).record(SITE, "/", T0, dims)
    first.flush()
    second.flush()
    first.close()
    second.close()
    assert db[sketches.DAILY].count_documents({}) == 2
    before = reads.visitors(db, SITE, *DAY).n
    assert before == 300
    values_before = db[sketches.VALUES].count_documents({})
    assert sketches.compact_all(db, dt.datetime(2026, 4, 1, tzinfo=dt.UTC)) == (
        2 + 2 + 2 + values_before)                       # every partial, merged
    for coll in (sketches.HOURLY, sketches.DAILY, sketches.MONTHLY):
        assert db[coll].count_documents({}) == 1
    assert db[sketches.VALUES].count_documents({}) == values_before // 2
    assert reads.visitors(db, SITE, *DAY).n == before
    assert sketches.compact_all(db, dt.datetime(2026, 4, 1, tzinfo=dt.UTC)) == 0
    frame = reads.breakdown(db, SITE, "browser", *DAY)
    assert frame["visitors"].tolist() == [300]
    assert frame["hits"].tolist() == [400]


def test_bad_arguments_are_clear_errors(db):
    with pytest.raises(HitboardError, match="unknown dimension"):
        reads.breakdown(db, SITE, "$where", *DAY)
    with pytest.raises(HitboardError):
        reads.breakdown(db, "bad site!", "status", *DAY)
    with pytest.raises(HitboardError, match="empty range"):
        reads.visitors(db, SITE, DAY[1], DAY[0])
    recorder = _recorder(db)
    with pytest.raises(HitboardError):
        recorder.record(SITE, "/", T0, None)
    with pytest.raises(HitboardError):
        recorder.record(SITE, "/", T0, classify(SITE, "/"), n=0)
    recorder.close()


def test_evicted_sketch_buckets_continue_in_new_documents(db, monkeypatch):
    """Past MAX_SKETCH_BUCKETS the recorder forgets its sketches and writes later ones to
    documents of a new owner: the union still counts everyone once."""
    from queries.dimensions import sketching

    monkeypatch.setattr(sketching, "MAX_SKETCH_BUCKETS", 2)
    recorder = _recorder(db)
    for i in range(30):
        dims = classify(SITE, "/", agent=CHROME, address=f"8.8.8.{i % 10 + 1}")
        recorder.record(SITE, "/", T0 + dt.timedelta(hours=i % 5), dims)
        recorder.flush()
    recorder.close()
    assert reads.visitors(db, SITE, *DAY).n == 10
    assert db[sketches.DAILY].count_documents({}) > 1
    frame = reads.breakdown(db, SITE, "country", *DAY)
    assert frame["visitors"].tolist() == [10] and frame["hits"].tolist() == [30]


def test_the_counters_name_the_owner_whose_sketches_a_flush_wrote(db, monkeypatch):
    """The flush that starts a new owner names that owner in its counter documents: a
    bucket flushed once, then (a long log's early hours), is read from its sketches."""
    from queries.dimensions import sketching

    monkeypatch.setattr(sketching, "MAX_SKETCH_BUCKETS", 4)
    recorder = _recorder(db)
    hours = [T0.replace(minute=0) + dt.timedelta(hours=h) for h in range(7)]
    for n, hour in enumerate(hours[:6]):
        dims = classify(SITE, "/", agent=CHROME, address=f"8.8.8.{n + 1}")
        recorder.record(SITE, "/", hour, dims)
        recorder.flush()
    recorder.close()
    assert [reads.visitors(db, SITE, a, b).n
            for a, b in zip(hours, hours[1:], strict=False)] == [1] * 6


@pytest.mark.skipif(not SHARED_LOG.exists(), reason=f"{SHARED_LOG} is not there")
def test_a_log_tally_holds_what_classify_gives_hit_by_hit():
    """``LogTally`` (the ingest's way) against hits classified one by one."""
    parser = LineParser()
    records = [parser.parse(line) for line in SHARED_LOG.open(encoding="utf-8").readlines()[:3000]]
    tally, expected = LogTally(), {}
    tally.add_lines([SITE] * 1000, columns(records[:1000]))     # lines come chunk by chunk
    tally.add_lines([SITE] * 2000, columns(records[1000:]))
    for record in records:
        dims = classify(SITE, record.path, query=record.query, status=record.status,
                        referrer_url=record.referrer, agent=record.user_agent,
                        address=record.host, vhost=record.vhost)
        counts, pairs = expected.setdefault(hour_unit(SITE, record.time), ({}, set()))
        counts[dims.values] = counts.get(dims.values, 0) + 1
        pairs.add((dims.visitor, dims.values))
    assert tally.pending() == expected
    assert len(expected) > 20 and sum(len(p) for _, p in expected.values()) > 1000


def test_record_many_counts_what_record_counts_and_checks_every_hit_first(db):
    hits = [(SITE, f"/p{i % 3}", T0 + dt.timedelta(hours=i % 4),
             classify(SITE, f"/p{i % 3}", agent=CHROME, address=f"8.8.4.{i % 7}"), i % 2 + 1)
            for i in range(40)]
    one_by_one, at_once = _recorder(db), _recorder(db)
    for hit in hits:
        one_by_one.record(*hit)
    at_once.record_many(hits)
    assert at_once._pending == one_by_one._pending
    with pytest.raises(HitboardError):
        at_once.record_many([hits[0], (SITE, "/", T0, hits[0][3], 0)])
    assert at_once.status().pending_hits == one_by_one.status().pending_hits
    for recorder in (one_by_one, at_once):
        recorder.close()


def test_a_flush_past_the_bucket_limit_lists_the_owner_it_writes_as(db, monkeypatch):
    """A flush holding more buckets than MAX_SKETCH_BUCKETS (a log of many days in one
    batch) writes its sketches as a new owner: its counters list that owner, so the
    visitors are read (a long log read 0 visitors)."""
    from queries.dimensions import sketching

    monkeypatch.setattr(sketching, "MAX_SKETCH_BUCKETS", 2)
    recorder = _recorder(db)
    for i in range(4):
        dims = classify(SITE, "/", agent=CHROME, address=f"8.8.8.{i + 1}")
        recorder.record(SITE, "/", T0 + dt.timedelta(hours=i), dims)
    recorder.close()
    assert reads.visitors(db, SITE, *DAY).n == 4
    assert reads.visitors(db, SITE, T0.replace(minute=0), T0.replace(minute=0)
                          + dt.timedelta(hours=1)).n == 1
    assert reads.breakdown(db, SITE, "country", *DAY)["visitors"].tolist() == [4]
