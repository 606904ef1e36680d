"""Raw events for synthetic hits: one per hit, well-formed, reserved client addresses."""

import datetime as dt

from fakes import stored_count

from queries.events.writer import EventWriter
from queries.loadgen import LoadRunner, TrafficModel
from queries.loadgen.events import EventFeed
from queries.stats.writes import RecorderStatus

NOW = dt.datetime(2026, 11, 21, 12, tzinfo=dt.UTC)
FIELDS = {"time", "site", "host", "method", "path", "query", "status", "bytes", "referrer",
          "user_agent"}


class Sink:
    def __init__(self):
        self.docs = []

    def add(self, doc):
        self.docs.append(doc)


def test_one_event_per_hit_within_the_tick():
    sink = Sink()
    EventFeed(sink)([("shop.example", "/", 3), ("shop.example", "/blog/a", 2)], NOW, 0.5)
    assert [d["path"] for d in sink.docs] == ["/", "/", "/", "/blog/a", "/blog/a"]
    for doc in sink.docs:
        assert set(doc) == FIELDS
        assert NOW - dt.timedelta(seconds=0.5) <= doc["time"] <= NOW
        assert doc["host"].startswith(("192.0.2.", "198.51.100.", "203.0.113."))
        assert doc["status"] in (200, 304, 404, 500) and doc["bytes"] > 0


def test_people_s_pageviews_are_followed_by_custom_events_of_the_same_visitor():
    sink, custom = Sink(), Sink()
    cells = [("shop.example", "/products/42", 2000), ("shop.example", "/blog/a", 2000),
             ("shop.example", "/", 2000)]
    EventFeed(sink, seed=3, custom=custom)(cells, NOW, 1.0)
    views: dict[tuple, list] = {}
    for d in sink.docs:
        views.setdefault((d["host"], d["user_agent"], d["path"]), []).append(d)
    names = {}
    for event in custom.docs:     # after a pageview of its visitor, answered 200 to a person
        assert any(view["status"] == 200 and "Googlebot" not in view["user_agent"]
                   and view["time"] <= event["time"] <= NOW
                   for view in views[(event["host"], event["user_agent"], event["page"])])
        names.setdefault(event["name"], []).append(event)
    assert set(names) == {"Add to cart", "Purchase", "Newsletter signup"}
    assert {e["page"] for e in names["Newsletter signup"]} == {"/blog/a"}
    assert all(e["revenue"][0] == "EUR" and float(e["revenue"][1]) >= 9.9
               for e in names["Purchase"])
    assert all(e["revenue"] is None for e in names["Add to cart"])


def test_same_seed_same_events():
    a, b = Sink(), Sink()
    EventFeed(a, seed=1)([("s", "/", 50)], NOW, 1.0)
    EventFeed(b, seed=1)([("s", "/", 50)], NOW, 1.0)
    assert a.docs == b.docs


class Recorder:
    def add_pending(self, *args, **kwargs):
        pass

    def status(self):
        return RecorderStatus()


def test_the_runner_writes_as_many_events_as_hits(embedded_db):
    writer = EventWriter(embedded_db)
    clock = [0.0]
    runner = LoadRunner(Recorder(), TrafficModel(pages=4, diurnal=0.0), 500,
                        clock=lambda: clock[0], wall=lambda: NOW, events=EventFeed(writer))
    runner.step(0.0)
    for _ in range(20):
        clock[0] += 0.1
        runner.step(clock[0])
    writer.close()
    assert writer.totals.written == runner.hits_sent > 0
    assert stored_count(embedded_db) == runner.hits_sent
