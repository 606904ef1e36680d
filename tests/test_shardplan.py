"""The shard-key simulation on synthetic workloads, and on documents read from a store."""

from __future__ import annotations

import datetime as dt

import pytest

from queries import HitboardError, log_hit
from queries.sharding import plan as shardplan
from queries.sharding.plan import StatsDoc
from queries.stats import schema

DAY = dt.datetime(2026, 11, 21, tzinfo=dt.UTC)
KB = 1024


def skewed_workload(days: int = 30, cold_pages: int = 20) -> list[StatsDoc]:
    """One hot page whose documents fill every minute; cold pages with sparse ones."""
    docs = []
    pages = [("/hot", 30 * KB, 50_000)] + [(f"/cold-{i}", KB, 100) for i in range(cold_pages)]
    for page, size, hits in pages:
        for offset in range(days):
            date = DAY - dt.timedelta(days=offset)
            docs.append(StatsDoc(schema.DAILY, schema.daily_id(date, "s", page), "s", page,
                                 date, size, hits))
        month = schema.month_start(DAY)
        docs.append(StatsDoc(schema.MONTHLY, schema.monthly_id(month, "s", page), "s", page,
                             month, 2 * KB, hits * days))
    return docs


def by_name(plan: shardplan.Plan) -> dict[str, shardplan.KeyPlan]:
    return {k.candidate.name: k for k in plan.keys}


def test_hot_page_is_a_jumbo_chunk_under_site_page_only():
    plan = by_name(shardplan.simulate(skewed_workload(), shards=4, chunk_bytes=256 * KB))
    assert len(plan["site-page"].jumbo) == 1
    assert plan["site-page"].jumbo[0].startswith("s /hot (")
    assert plan["site-page-date"].jumbo == ()
    assert plan["hashed-id"].jumbo == ()


def test_hot_page_takes_its_shards_writes():
    plan = by_name(shardplan.simulate(skewed_workload(), shards=4, chunk_bytes=256 * KB))
    hot_share = 50_000 / (50_000 + 20 * 100)
    assert max(plan["site-page"].write_share) >= hot_share
    assert max(plan["date"].write_share) == 1.0  # every write of a day in one chunk


def test_query_routing_per_key():
    plan = by_name(shardplan.simulate(skewed_workload(), shards=4, chunk_bytes=64 * KB))
    assert plan["site-page"].single_shard == 1.0
    assert plan["hashed-id"].single_shard < 0.5
    assert 0 < plan["site-page-date"].single_shard <= 1.0


def test_recommendation_avoids_jumbo_chunks_and_scatter_gather():
    plan = shardplan.simulate(skewed_workload(), shards=4, chunk_bytes=256 * KB)
    assert plan.recommended.candidate.name == "site-page-date"


def test_split_never_cuts_a_key_value():
    docs = skewed_workload(days=5, cold_pages=3)
    key = shardplan.CANDIDATES["site-page"].doc_key
    chunks = shardplan.split([d for d in docs if d.collection == schema.DAILY], key, 8 * KB)
    owners = {}
    for index, chunk in enumerate(chunks):
        for doc in chunk.docs:
            assert owners.setdefault(key(doc), index) == index
    assert all(c.jumbo == (c.size > 8 * KB) for c in chunks)


def test_balance_spreads_movable_chunks():
    docs = [StatsDoc(schema.DAILY, f"id{i}", "s", f"/p{i:03}", DAY, KB, 1) for i in range(64)]
    chunks = shardplan.split(docs, shardplan.CANDIDATES["site-page"].doc_key, 2 * KB)
    shardplan.balance(chunks, 4, 2 * KB)
    per_shard = [sum(c.size for c in chunks if c.shard == s) for s in range(4)]
    assert max(per_shard) - min(per_shard) < shardplan.BALANCED_WITHIN * 2 * KB


def test_route_finds_every_chunk_a_range_overlaps():
    docs = [StatsDoc(schema.DAILY, f"id{i}", "s", "/p", DAY + dt.timedelta(days=i), KB, 1)
            for i in range(10)]
    key = shardplan.CANDIDATES["date"].doc_key
    chunks = shardplan.split(docs, key, KB)
    for index, chunk in enumerate(chunks):
        chunk.shard = index
    assert shardplan.route(chunks, key(docs[2]), key(docs[4])) == {2, 3, 4}
    assert shardplan.route(chunks, (0,), (1,)) == {0}


def test_invalid_arguments_are_refused():
    with pytest.raises(HitboardError, match="shard count"):
        shardplan.simulate([], shards=0)
    with pytest.raises(HitboardError, match="chunk size"):
        shardplan.simulate([], chunk_bytes=-1)


def test_empty_store_gives_an_empty_workload():
    plan = shardplan.simulate([], shards=2)
    assert plan.queries == 0 and plan.day is None


def test_reads_bson_sizes_and_counters_from_the_store(db):
    for minute in range(3):
        log_hit(db, DAY + dt.timedelta(minutes=minute), "s", "/a")
    docs = shardplan.read_workload(db)
    daily = {d.page: d for d in docs if d.collection == schema.DAILY}
    assert daily["/a"].hits == 3 and daily["*"].hits == 3
    assert daily["/a"].size > 100
    assert {d.collection for d in docs} == {schema.DAILY, schema.MONTHLY}
    plan = shardplan.simulate(docs, shards=2)
    assert plan.queries == 6  # /a and * : today, 30 days, 12 months


def test_a_plan_pickles_so_the_dashboard_cache_can_keep_it():
    """The Data page caches the plan; lambdas in its candidates made every view log
    "Can't pickle <lambda>" and compute the plan again."""
    import pickle

    from dashboard.cache import ResultCache

    docs = [shardplan.StatsDoc(schema.DAILY, f"2026010{d}/s/p{p}", "s", f"/p{p}",
                               dt.datetime(2026, 1, d, tzinfo=dt.UTC), 900, 10 * p)
            for d in range(1, 8) for p in range(3)]
    plan = shardplan.simulate(docs)
    assert pickle.loads(pickle.dumps(plan)) == plan
    cache = ResultCache()
    assert cache.get_or_compute(("plan",), lambda: plan, timeout=60) == plan
    assert cache.get_or_compute(("plan",), lambda: None, timeout=60) == plan   # from cache
