"""Which shard key for the stats collections? A simulation over the store's own documents.

MongoDB's sharding advice is to "test with your own data". For each candidate key this module
splits ``stats.daily`` and ``stats.monthly`` into range chunks the way a cluster does
(by data size, never between two documents with the same key value: such a chunk is
*jumbo*, it can neither split nor move), lets a balancer even out the data between
shards, then measures where the last day's writes land and how many of the dashboard's
chart queries a router can send to a single shard. The reading is two small queries;
the rest is pure functions over plain records, so tests can build any workload.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import struct
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import groupby

import bson

from ..errors import HitboardError
from ..stats import schema

DEFAULT_SHARDS = 4
CHUNKS_PER_SHARD = 4  # the automatic chunk size makes about this many chunks per shard
BALANCED_WITHIN = 3   # chunks: the balancer stops when shards differ by less (MongoDB 6+)
HISTORY_DAYS = 30     # the historical page's default daily chart
HISTORY_MONTHS = 12


@dataclass(frozen=True)
class StatsDoc:
    """What the simulation needs of one stats document."""

    collection: str
    id: str
    site: str
    page: str
    date: dt.datetime
    size: int   # BSON bytes
    hits: int   # the daily (or monthly) counter


@dataclass(frozen=True)
class ChartQuery:
    """One chart read: a page's documents of ``collection`` with dates in [first, last]."""

    collection: str
    site: str
    page: str
    first: dt.datetime
    last: dt.datetime


@dataclass(frozen=True)
class Candidate:
    name: str
    label: str
    key: dict                                   # the shardCollection key document
    doc_key: Callable[[StatsDoc], tuple]
    query_range: Callable[[ChartQuery], tuple[tuple, tuple] | None]  # None: every shard


def _hashed(value: str) -> int:
    """A 64-bit hash of the _id, as a hashed index spreads it (MongoDB uses MD5 too)."""
    return struct.unpack("<q", hashlib.md5(value.encode()).digest()[:8])[0]


# Named functions, not lambdas: a Plan holds its candidates, and a plan must pickle (the
# dashboard's result cache stores it).
def _site_page(d: StatsDoc) -> tuple:
    return (d.site, d.page)


def _site_page_range(q: ChartQuery) -> tuple[tuple, tuple]:
    return (q.site, q.page), (q.site, q.page)


def _site_page_date(d: StatsDoc) -> tuple:
    return (d.site, d.page, schema.epoch_ms(d.date))


def _site_page_date_range(q: ChartQuery) -> tuple[tuple, tuple]:
    return ((q.site, q.page, schema.epoch_ms(q.first)),
            (q.site, q.page, schema.epoch_ms(q.last)))


def _hashed_id(d: StatsDoc) -> tuple:
    return (_hashed(d.id),)


def _every_shard(_q: ChartQuery) -> None:
    return None


def _date(d: StatsDoc) -> tuple:
    return (schema.epoch_ms(d.date),)


def _date_range(q: ChartQuery) -> tuple[tuple, tuple]:
    return (schema.epoch_ms(q.first),), (schema.epoch_ms(q.last),)


CANDIDATES = {c.name: c for c in (
    Candidate("site-page", "{metadata.site, metadata.page}",
              {"metadata.site": 1, "metadata.page": 1}, _site_page, _site_page_range),
    Candidate("site-page-date", "{metadata.site, metadata.page, metadata.date}",
              {"metadata.site": 1, "metadata.page": 1, "metadata.date": 1},
              _site_page_date, _site_page_date_range),
    Candidate("hashed-id", "hashed _id", {"_id": "hashed"}, _hashed_id, _every_shard),
    Candidate("date", "{metadata.date} (time)", {"metadata.date": 1}, _date, _date_range),
)}


# -- reading ----------------------------------------------------------------------------
def read_stats_docs(db, collection: str) -> list[StatsDoc]:
    """Every stats document of ``collection`` with its BSON size (the chunk arithmetic)."""
    counter = "daily" if collection == schema.DAILY else "monthly"
    docs = []
    for doc in db[collection].find({}):
        meta = doc.get("metadata") or {}
        if not {"site", "page", "date"} <= meta.keys():
            continue
        docs.append(StatsDoc(collection, str(doc["_id"]), meta["site"], meta["page"],
                             meta["date"], len(bson.encode(doc)), int(doc.get(counter) or 0)))
    return docs


def read_workload(db) -> list[StatsDoc]:
    return read_stats_docs(db, schema.DAILY) + read_stats_docs(db, schema.MONTHLY)


# -- the workload -----------------------------------------------------------------------
def last_day(docs: Iterable[StatsDoc]) -> dt.datetime | None:
    days = [d.date for d in docs if d.collection == schema.DAILY]
    return max(days) if days else None


def chart_queries(docs: list[StatsDoc]) -> list[ChartQuery]:
    """The live and historical pages' reads for every page written on the last day:
    today's minutes, the last 30 days, the last 12 months."""
    day = last_day(docs)
    if day is None:
        return []
    month = schema.month_start(day)
    year_ago = dt.datetime(month.year - (month.month <= HISTORY_MONTHS - 1),
                           (month.month - HISTORY_MONTHS) % 12 + 1, 1, tzinfo=dt.UTC)
    pages = sorted({(d.site, d.page) for d in docs
                    if d.collection == schema.DAILY and d.date == day})
    queries = []
    for site, page in pages:
        queries += [ChartQuery(schema.DAILY, site, page, day, day),
                    ChartQuery(schema.DAILY, site, page,
                               day - dt.timedelta(days=HISTORY_DAYS - 1), day),
                    ChartQuery(schema.MONTHLY, site, page, year_ago, month)]
    return queries


# -- chunks and balancing ---------------------------------------------------------------
@dataclass
class Chunk:
    low: tuple          # its first key; it holds keys up to the next chunk's first key
    size: int = 0
    docs: list[StatsDoc] = field(default_factory=list)
    jumbo: bool = False
    shard: int = 0


def split(docs: list[StatsDoc], key: Callable[[StatsDoc], tuple],
          chunk_bytes: int) -> list[Chunk]:
    """Range chunks of at most ``chunk_bytes``; a split point never falls between two
    documents with one key value, so a value bigger than a chunk makes a jumbo chunk."""
    chunks: list[Chunk] = []
    current = None
    for value, group in groupby(sorted(docs, key=key), key=key):
        group = list(group)
        size = sum(d.size for d in group)
        if current is None or (current.size and current.size + size > chunk_bytes):
            current = Chunk(value)
            chunks.append(current)
        current.docs += group
        current.size += size
        current.jumbo = current.size > chunk_bytes
    return chunks


def balance(chunks: list[Chunk], shards: int, chunk_bytes: int) -> None:
    """Every chunk starts on the primary shard 0; the balancer moves the donor's
    lowest movable chunk to the emptiest shard until no two shards differ by
    ``BALANCED_WITHIN`` chunks' worth of data. Jumbo chunks never move."""
    for chunk in chunks:
        chunk.shard = 0
    load = [0] * shards
    load[0] = sum(c.size for c in chunks)
    for _ in range(len(chunks) * shards):
        donor = max(range(shards), key=load.__getitem__)
        taker = min(range(shards), key=load.__getitem__)
        gap = load[donor] - load[taker]
        if gap < BALANCED_WITHIN * chunk_bytes:
            return
        movable = next((c for c in chunks if c.shard == donor and not c.jumbo
                        and 0 < c.size < gap), None)
        if movable is None:
            return
        movable.shard = taker
        load[donor] -= movable.size
        load[taker] += movable.size


def route(chunks: list[Chunk], low: tuple, high: tuple) -> set[int]:
    """The shards a router sends a query for keys in [low, high] to."""
    lows = [c.low for c in chunks[1:]]
    first, last = bisect_right(lows, low), bisect_right(lows, high)
    return {c.shard for c in chunks[first:last + 1]}


# -- the plan ---------------------------------------------------------------------------
@dataclass(frozen=True)
class KeyPlan:
    candidate: Candidate
    chunks: int
    jumbo: tuple[str, ...]          # "site page (3.2 MB)" of each jumbo chunk's first key
    data_share: tuple[float, ...]   # per shard
    write_share: tuple[float, ...]  # of the last day's writes, per shard
    single_shard: float             # fraction of chart queries on one shard

    @property
    def write_imbalance(self) -> float:
        return _ratio(self.write_share)

    @property
    def data_imbalance(self) -> float:
        return _ratio(self.data_share)

    @property
    def score(self) -> float:
        """Targeted reads times even writes: 1 is every query on one shard and the busiest
        shard taking no more than its even share."""
        busiest = max(self.write_share, default=0.0)
        even = 1 / len(self.write_share) if self.write_share else 0.0
        return self.single_shard * (even / busiest if busiest else 0.0)


def _ratio(shares: tuple[float, ...]) -> float:
    low, high = min(shares, default=0.0), max(shares, default=0.0)
    return high / low if low else float("inf")


@dataclass(frozen=True)
class Plan:
    shards: int
    chunk_bytes: int
    data_bytes: int
    day: dt.datetime | None
    queries: int
    keys: tuple[KeyPlan, ...]
    chunk_rule: str  # how the chunk size was chosen, for the reader

    @property
    def recommended(self) -> KeyPlan | None:
        """No jumbo chunk first, then the best score."""
        return max(self.keys, key=lambda k: (not k.jumbo, k.score), default=None)


def auto_chunk_bytes(docs: list[StatsDoc], shards: int) -> int:
    """About ``CHUNKS_PER_SHARD`` chunks per shard per collection: the data's shape at the
    scale a cluster splits it, whatever its size today."""
    per_collection = max((sum(d.size for d in docs if d.collection == c)
                          for c in (schema.DAILY, schema.MONTHLY)), default=0)
    return max(per_collection // (shards * CHUNKS_PER_SHARD), 1)


def simulate(docs: list[StatsDoc], shards: int = DEFAULT_SHARDS,
             chunk_bytes: int | None = None,
             candidates: Iterable[str] = tuple(CANDIDATES)) -> Plan:
    if shards < 1:
        raise HitboardError(f"invalid shard count {shards}: use 1 or more")
    if chunk_bytes is not None and chunk_bytes < 1:
        raise HitboardError(f"invalid chunk size {chunk_bytes} bytes: use a positive size")
    rule = (f"{chunk_bytes / 2**20:g} MB as asked" if chunk_bytes else
            f"automatic: ~{CHUNKS_PER_SHARD} per shard of today's data; MongoDB's default "
            "is 128 MB")
    chunk_bytes = chunk_bytes or auto_chunk_bytes(docs, shards)
    workload = chart_queries(docs)
    day = last_day(docs)
    today = {(d.site, d.page): d.hits for d in docs
             if d.collection == schema.DAILY and d.date == day}
    keys = tuple(_plan_key(CANDIDATES[name], docs, workload, (day, today), shards, chunk_bytes)
                 for name in candidates)
    return Plan(shards, chunk_bytes, sum(d.size for d in docs), day, len(workload), keys,
                rule)


def _plan_key(candidate: Candidate, docs, workload, last, shards, chunk_bytes) -> KeyPlan:
    chunks_of = {}
    for collection in (schema.DAILY, schema.MONTHLY):
        chunks = split([d for d in docs if d.collection == collection], candidate.doc_key,
                       chunk_bytes)
        balance(chunks, shards, chunk_bytes)
        chunks_of[collection] = chunks
    every = [c for chunks in chunks_of.values() for c in chunks]
    data = [0] * shards
    for chunk in every:
        data[chunk.shard] += chunk.size
    writes = [0] * shards
    # A hit of the last day increments its page's daily and monthly documents.
    for chunks in chunks_of.values():
        for chunk in chunks:
            writes[chunk.shard] += sum(_day_hits(d, *last) for d in chunk.docs)
    single = 0
    for query in workload:
        chunks = chunks_of[query.collection]
        bounds = candidate.query_range(query)
        targets = ({c.shard for c in chunks} if bounds is None else route(chunks, *bounds))
        single += len(targets) <= 1
    jumbo = tuple(f"{c.docs[0].site} {c.docs[0].page} ({c.size / 2**20:.2f} MB, "
                  f"{c.docs[0].collection})" for c in every if c.jumbo)
    return KeyPlan(candidate, len(every), jumbo, _shares(data), _shares(writes),
                   single / len(workload) if workload else 0.0)


def _day_hits(doc: StatsDoc, day: dt.datetime | None, today: dict) -> int:
    """The last day's hits landing on ``doc``: its own counter for that day's daily
    document, the page's count of that day for that month's document."""
    if day is None:
        return 0
    if doc.collection == schema.DAILY:
        return doc.hits if doc.date == day else 0
    return today.get((doc.site, doc.page), 0) if doc.date == schema.month_start(day) else 0


def _shares(values: list[int]) -> tuple[float, ...]:
    total = sum(values)
    return tuple(v / total if total else 0.0 for v in values)
