"""The load generator gives its hits plausible dimensions: a referrer mix, browsers,
countries, a bot share and repeat visitors, live and in backfilled history."""

from __future__ import annotations

import datetime as dt

from fakes import stored_events

import queries
from queries.counting import DimensionRecorder
from queries.dimensions import reads
from queries.loadgen import LoadRunner, TrafficModel
from queries.loadgen.history import backfill_history

NOON = dt.datetime(2026, 11, 21, 12, tzinfo=dt.UTC)
DAY = (dt.datetime(2026, 11, 21, tzinfo=dt.UTC), dt.datetime(2026, 11, 22, tzinfo=dt.UTC))


class Clock:
    now = 0.0

    def __call__(self):
        return self.now


def _live(db, model: TrafficModel, rate: float, ticks: int, wall=NOON,
          events=None) -> LoadRunner:
    """``ticks`` tenths of a second of live traffic at ``rate`` hits/s, stamped
    ``wall``, into recorders closed at the end."""
    clock = Clock()
    recorder = queries.HitRecorder(db, flush_interval=3600)
    dimensions = DimensionRecorder(db, flush_interval=3600)
    runner = LoadRunner(recorder, model, rate, clock=clock, wall=lambda: wall,
                        dimensions=dimensions, events=events)
    runner.step(0.0)
    for _ in range(ticks):
        clock.now += 0.1
        runner.step(clock.now)
    recorder.close()
    dimensions.close()
    return runner


def _values(db, site, by):
    frame = reads.breakdown(db, site, by, *DAY)
    return dict(zip(frame["value"], frame["hits"], strict=True))


def test_live_traffic_has_every_dimension(embedded_db):
    runner = _live(embedded_db, TrafficModel(diurnal=0.0, seed=3), 2_000, 50)
    site = "shop.example"
    bots = _values(embedded_db, site, "bot")
    total = sum(bots.values())
    assert total == queries.series(embedded_db, site, *DAY, "day")["*"].sum()
    assert 0.05 < bots["bot"] / total < 0.2
    assert len(_values(embedded_db, site, "referrer")) >= 5
    assert {"Chrome", "Mobile Safari", "Firefox"} <= set(_values(embedded_db, site, "browser"))
    assert {"desktop", "mobile", "tablet", "bot"} == set(_values(embedded_db, site, "device"))
    assert len(_values(embedded_db, site, "country")) >= 8
    assert "spring-sale" in _values(embedded_db, site, "utm_campaign")
    assert "404" in _values(embedded_db, site, "status")
    visitors = reads.visitors(embedded_db, site, *DAY).n
    assert 0 < visitors < total / 2                  # visitors come back
    assert runner.errors == 0


def test_backfill_writes_dimensions_matching_the_hits(embedded_db):
    with DimensionRecorder(embedded_db, flush_interval=3600) as dimensions:
        backfill_history(embedded_db, TrafficModel(seed=2), 5.0, days=1, now=NOON,
                         dimensions=dimensions)
    site = "shop.example"
    hits = int(queries.series(embedded_db, site, DAY[0] - dt.timedelta(days=1), DAY[1],
                              "day")["*"].sum())
    frame = reads.breakdown(embedded_db, site, "kind", DAY[0] - dt.timedelta(days=1), DAY[1])
    assert int(frame["hits"].sum()) == hits > 0
    assert set(frame["value"]) == {"page", "asset"}


def test_backfill_writes_the_visits_of_the_people_s_pageviews(embedded_db):
    """The demo's history shows visits too: its pageviews are the people's page hits
    the dimension counters counted, cut into visits of a few views each (at a rate
    low enough for the generator to draw visits of ``VIEWS_PER_VISIT`` on average)."""
    from queries.visits import reads as visit_reads

    with DimensionRecorder(embedded_db, flush_interval=3600) as dimensions:
        backfill_history(embedded_db, TrafficModel(seed=2), 0.3, days=1, now=NOON,
                         dimensions=dimensions)
    site, start = "shop.example", DAY[0] - dt.timedelta(days=1)
    kinds = reads.breakdown(embedded_db, site, "kind", start, DAY[1], humans=True)
    pages = int(kinds.loc[kinds["value"] == "page", "hits"].iloc[0])
    found = visit_reads.totals(embedded_db, site, start, DAY[1])
    assert found.pageviews == found.views == pages > 0
    assert 1.5 < found.views_per_visit < 6 and 0 < found.bounce_rate < 100


def test_raw_events_and_counters_classify_each_hit_alike(embedded_db):
    """The demo's live traffic: its raw events are the requests its dimensions counted,
    so bots, referrers, statuses... and visitors agree between the two."""
    from queries.dimensions.page_reads import events_breakdown
    from queries.events.writer import EventWriter
    from queries.loadgen.events import EventFeed
    from queries.reads.filtered import filtered_breakdowns

    writer = EventWriter(embedded_db)
    runner = _live(embedded_db, TrafficModel(sites=2, diurnal=0.0, seed=5), 1_000, 30,
                   events=EventFeed(writer, 5))
    writer.close()
    assert runner.errors == 0
    for site in TrafficModel(sites=2).site_names:
        for dim in ("bot", "browser", "device", "referrer", "status", "utm_campaign", "kind",
                    "country", "page"):
            counted = _values(embedded_db, site, dim)
            raw = events_breakdown(embedded_db, site, dim, *DAY)
            assert dict(zip(raw["value"], raw["hits"], strict=True)) == counted, dim
        assert _values(embedded_db, site, "bot").get("bot", 0) > 0
        humans = filtered_breakdowns(embedded_db, site, "bot", "human", *DAY, ("country",))
        countries = set(humans.panels["country"]["value"])    # a filtered view's panel
        assert countries and countries <= set(_values(embedded_db, site, "country"))
        assert "unknown" not in countries
        pairs = {(e["host"], e["user_agent"]) for e in stored_events(embedded_db, site)}
        assert abs(reads.visitors(embedded_db, site, *DAY).n - len(pairs)) <= 0.02 * len(pairs)
        for host, _ in pairs:                    # documentation addresses only
            assert host.startswith(("2001:db8::", "192.0.2.", "198.51.100.", "203.0.113."))


def test_backfilled_and_live_visitors_view_a_few_pages_each(embedded_db):
    """The demo's figures read as a site's: a backfilled day at the demo's rate and a
    minute of live traffic both show a few views per visitor (History's KPI), not the
    hundred a few draws per cell gave. A day: 3-12 (people come back in a day); the
    live minute: 2-6."""
    from dashboard.loadgen.demo import DEMO

    model = DEMO.model()
    site = model.site_names[0]
    with DimensionRecorder(embedded_db, flush_interval=3600) as dimensions:
        backfill_history(embedded_db, model, DEMO.rate, days=1, now=NOON,
                         dimensions=dimensions)
    yesterday = (DAY[0] - dt.timedelta(days=1), DAY[0])
    hits = int(queries.series(embedded_db, site, *yesterday, "day")["*"].sum())
    assert 3 < hits / reads.visitors(embedded_db, site, *yesterday).n < 12

    minute = (NOON + dt.timedelta(hours=2), NOON + dt.timedelta(hours=3))
    _live(embedded_db, model, 50, 600, wall=minute[0])
    hits = int(queries.series(embedded_db, site, *minute, "hour")["*"].sum())
    assert 2 < hits / reads.visitors(embedded_db, site, *minute).n < 6


def test_backfilled_history_converts_as_live_traffic_does(embedded_db):
    """The demo's past days have custom events too (an add to cart, a purchase with its
    revenue, a newsletter signup after people's pageviews), in the visits they belong
    to; a whole day's sums hold what its hours hold."""
    from queries.custom import reads as custom_reads
    from queries.visits import reads as visit_reads

    with DimensionRecorder(embedded_db, flush_interval=3600) as dimensions:
        backfill_history(embedded_db, TrafficModel(seed=2), 0.3, days=1, now=NOON,
                         dimensions=dimensions)
    site, start = "shop.example", DAY[0] - dt.timedelta(days=1)
    whole = custom_reads.events(embedded_db, site, start, DAY[0]).set_index("value")
    assert {"Add to cart", "Purchase"} <= set(whole.index)
    assert whole.loc["Purchase", "revenue"].startswith("EUR ")
    assert (whole["visitors"] <= whole["conversions"]).all()
    hours = [custom_reads.events(embedded_db, site, start + dt.timedelta(hours=h),
                                 start + dt.timedelta(hours=h + 1)) for h in range(24)]
    by_hour = {}
    for table in hours:
        for name, n in table[["value", "conversions"]].values.tolist():
            by_hour[name] = by_hour.get(name, 0) + n
    assert by_hour == whole["conversions"].to_dict()
    views = visit_reads.totals(embedded_db, site, start, DAY[0])
    assert 0 < whole["conversions"].sum() < views.pageviews / 10
