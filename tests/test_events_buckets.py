"""How events are cut into buckets and read back newest first (``queries.events.buckets``)."""

from __future__ import annotations

import datetime as dt
import json
import zlib
from array import array

from queries.events import buckets
from queries.events.writer import EventWriter

T0 = dt.datetime(2015, 5, 17, 10, 59, tzinfo=dt.UTC)
NOW = dt.datetime(2026, 11, 22, tzinfo=dt.UTC)


def _events(n, site="s", step=dt.timedelta(seconds=1)):
    return [{"time": T0 + i * step, "site": site, "path": f"/{i}", "status": 200}
            for i in range(n)]


def rows(events: list[dict]) -> list[tuple]:
    return [buckets.row(event) for event in events]


def test_a_bucket_holds_one_site_one_hour_and_at_most_bucket_events(monkeypatch):
    monkeypatch.setattr(buckets, "BUCKET_EVENTS", 40)
    events = _events(100) + _events(3, site="t")     # 60 in 10:59, 40 in 11:00
    packed = buckets.pack(rows(events), NOW)
    assert [(b["site"], b["n"]) for b in packed] == [("s", 40), ("s", 20), ("s", 40),
                                                     ("t", 3)]
    for bucket in packed:
        assert bucket["start"] == dt.datetime.fromtimestamp(buckets.times(bucket)[0] / 1000,
                                                            dt.UTC)
        assert bucket["end"] - bucket["start"] < dt.timedelta(hours=1)
        assert bucket["start"].hour == bucket["end"].hour and bucket["ingested"] == NOW
        assert len(buckets.column(bucket, "path", bucket["n"])) == bucket["n"]
        assert "country" not in bucket
    assert sum((buckets.column(b, "path", b["n"]) for b in packed if b["site"] == "s"),
               []) == [e["path"] for e in events if e["site"] == "s"]


def test_keyed_buckets_are_named_by_their_pass_and_first_offset_and_sort_as_the_file():
    events = _events(3, step=dt.timedelta(hours=1))
    packed = buckets.pack(rows(events), NOW, [(2**64 - 1, 9), (2**64 - 1, 100), (2**64 - 1, 4096)])
    assert [b["_id"] for b in packed] == sorted(b["_id"] for b in packed)
    assert [(b["stream"], b["first"], b["last"]) for b in packed] == [
        ("ffffffffffffffff", 9, 9), ("ffffffffffffffff", 100, 100),
        ("ffffffffffffffff", 4096, 4096)]


def test_a_country_column_only_when_an_event_has_one():
    events = _events(2)
    events[1]["country"] = "FR"
    (bucket,) = buckets.pack(rows(events), NOW)
    assert buckets.column(bucket, "country", 2) == [None, "FR"]
    without, with_country = buckets.events(bucket | {"_id": "b"}, [0, 1])
    assert with_country["country"] == "FR" and "country" not in without


def test_newest_first_pages_skip_nothing_and_repeat_nothing_while_buckets_arrive(db):
    writer = EventWriter(db, clock=lambda: NOW)
    for i in range(10):                       # ten buckets, one an hour
        writer.add({"time": T0 + dt.timedelta(hours=i), "site": "s", "path": "/"})
        writer.flush()
    found = buckets.newest(db, {"site": "s"}, ())
    first = [next(found) for _ in range(4)]   # the first page
    for i in range(10, 13):                   # newer buckets, written meanwhile
        writer.add({"time": T0 + dt.timedelta(hours=i), "site": "s", "path": "/"})
        writer.flush()
    ends = [b["end"] for b in first + list(found)]
    assert ends == sorted({T0 + dt.timedelta(hours=i) for i in range(10)}, reverse=True)


def test_strings_are_stored_once_per_bucket_and_numbers_packed():
    events = [{"time": T0, "site": "s", "path": p, "status": st, "bytes": 10}
              for p, st in (("/a", 200), ("/b", 404), ("/a", 200), ("/a", 304))]
    (bucket,) = buckets.pack(rows(events), NOW)
    assert bucket["path"]["v"] == ["/a", "/b"]
    assert buckets.coded(bucket, "path", 4) == (["/a", "/b"], array("H", [0, 1, 0, 0]))
    assert bucket["status"]["c"] == "H" and len(bucket["status"]["p"]) == 4 * 2
    assert buckets.coded(bucket, "status", 4) == ([200, 404, 200, 304], None)
    assert buckets.column(bucket, "bytes", 4) == [10] * 4
    assert buckets.coded(bucket, "referrer", 4)[1] == array("H", [0, 0, 0, 0])
    plain = {**bucket, "status": [200, 404, 200, 304]}         # written before packing
    assert buckets.coded(plain, "status", 4) == buckets.coded(bucket, "status", 4)
    older = {**bucket, "path": ["/a", "/b", "/a", "/a"]}      # a column stored plain
    assert buckets.column(older, "path", 4) == buckets.column(bucket, "path", 4)


def test_distinct_values_are_a_list_for_the_store_to_compress_past_64_kib_deflated():
    agents = [f"Mozilla/5.0 (X11; Linux x86_64) Agent/{i}.0" for i in range(40)]
    paths = [f"/{i:04d}/" + "x" * 100 for i in range(1000)]     # a scanner's long paths
    events = [{"time": T0, "site": "s", "path": paths[i], "status": None, "bytes": 2**40,
               "user_agent": agents[i % 40], "referrer": None} for i in range(1000)]
    (bucket,) = buckets.pack(rows(events), NOW)
    assert bucket["user_agent"]["v"] == agents and "z" not in bucket["user_agent"]
    assert "z" in bucket["path"] and len(bucket["path"]["z"]) < len("".join(paths)) / 3
    assert buckets.column(bucket, "user_agent", 1000) == [agents[i % 40] for i in range(1000)]
    assert buckets.column(bucket, "path", 1000) == paths
    assert buckets.column(bucket, "status", 1000) == [None] * 1000   # did not fit: a list
    assert buckets.column(bucket, "bytes", 1000) == [2**40] * 1000
    older = {**bucket, "user_agent": {"z": zlib.compress(json.dumps(agents).encode(), 1),
                                      "i": bucket["user_agent"]["i"]}}   # deflated from 256 B
    assert buckets.column(older, "user_agent", 1000) == buckets.column(bucket, "user_agent",
                                                                       1000)


