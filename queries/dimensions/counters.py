"""Referrers, status codes, browsers, countries... and visitor sketches as a
representation of the count engine (``queries.counting``, whose ``DimensionRecorder``
counts them as hits arrive, with the engine's coalescing and exactly-once flush guard).

Counters live in ``dims.hourly``, ``dims.daily`` and ``dims.monthly``, one document per
site and UTC hour, day or month holding every dimension (page ``*``: per-page counters
would double the upserts of a flush, see README; a page's breakdown comes from raw
events, within their retention)::

    {_id: "20150517/site*", metadata: {date, site, page: "*"}, hits: N, bh: B,
     v: {referrer: {"news%2Eexample": 3, "(direct)": 9, ...}, status: {"200": 11}, ...},
     b: {referrer: {"(direct)": 4}, status: {"200": 4}, ...}}

``b`` counts the bot hits (``bot = bot``) alone, by the same dimensions, so humans are
``v - b`` value by value: it costs no extra write (same ``$inc``, the ~14-28% of hits that
are bots add fields to it). ``b`` only holds values ``v`` kept (a bot value the cap sent to
``(other)`` is counted there in both), so it is bounded by the same caps. ``bh`` is the
bot hits written by a recorder that splits them (it is incremented, possibly by 0, on
every flush): a document whose ``v.bot.bot`` exceeds ``bh`` holds bot hits stored before
the split, which reads count as humans and report (``reads``).

Values are escaped field names (see ``encoding``) so one ``$inc`` upsert counts them all;
each dimension of each document holds at most ``CAPS[dim]`` values, the rest summed as
``(other)``. To cap, a flush must know which values a document already holds: it asks
the documents it has not seen before (one ``find`` per collection per flush) and then
remembers what it wrote. With one writer (the embedded store belongs to one process) the
cap is exact; writers running side by side on MongoDB may each add values in the same
second, so a document can then exceed the cap by the values of those few flushes.
Visitor sketches (``sketching``, stored as ``sketches`` says) are written before the
counters, each flush.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections import Counter
from itertools import chain

from pymongo.errors import PyMongoError

from .. import validation
from ..stats import schema
from ..stats.writes import Increment
from . import sketches
from .classify import Dimensions
from .encoding import OTHER, cap, escape
from .sketching import IS_BOT, BucketSketches

log = logging.getLogger(__name__)
HOURLY, DAILY, MONTHLY = "dims.hourly", "dims.daily", "dims.monthly"
COLLECTIONS = (HOURLY, DAILY, MONTHLY)
MAX_KNOWN = 50_000        # documents whose values are remembered between flushes
WHOLE = validation.WHOLE_SITE



def _by_pair(counts: dict) -> tuple[Counter, Counter, int]:
    """{values tuple: hits} as hits per (dimension, value) pair for every hit, the same
    for the bot hits alone, and the bot hits. Pairs, not escaped names: an hour holds
    tens of thousands of distinct values tuples but a few hundred distinct pairs, so
    escaping and nesting by dimension wait until the pairs are summed. Values seen once
    (most of a log's) are counted by ``Counter``'s C loop, the others weighted."""
    bot_values = [(values, n) for values, n in counts.items() if IS_BOT in values]
    return _count(counts.items()), _count(bot_values), sum(n for _, n in bot_values)


def _count(items) -> Counter:
    """Hits per pair of ``(values, hits)`` items."""
    pairs = Counter(chain.from_iterable(values for values, n in items if n == 1))
    get = pairs.get
    for values, n in items:
        if n != 1:
            for pair in values:
                pairs[pair] = get(pair, 0) + n
    return pairs


def _by_dimension(pairs: Counter) -> dict[str, dict[str, int]]:
    """Hits per (dimension, value) as {dimension: {escaped value: hits}}."""
    by_dim: dict[str, dict[str, int]] = {}
    for (dim, value), n in pairs.items():
        names = by_dim.get(dim)
        if names is None:
            names = by_dim[dim] = {}
        names[escape(value)] = n
    return by_dim


def _add(unit: tuple[dict, set], dims: Dimensions, n: int) -> None:
    """Count ``n`` hits of ``dims`` into an hour's unit. The (visitor, values) pair goes
    into a set: tuples of strings, which the garbage collector stops tracking, where a
    container per visitor would be traversed by every collection until the flush."""
    counts, pairs = unit
    values = dims.values
    counts[values] = counts.get(values, 0) + n
    if dims.visitor is not None:
        pairs.add((dims.visitor, values))


def _sums(pending: dict) -> dict[tuple[str, str], tuple]:
    """A flush's pending hours summed into their counter documents (``_entry``): each
    hour's pairs counted once, its day summing its hours, its month its days."""
    raw: dict[tuple[str, str], tuple] = {}
    for (_, site, year, month, day, hour), (counts, visitor_pairs) in pending.items():
        start = dt.datetime(year, month, day, hour, tzinfo=dt.UTC)
        pairs, bots, bot_hits = _by_pair(counts)
        hour_entry = raw[(HOURLY, sketches.bucket_id(site, start, "hour"))] = (  # one a unit
            schema.metadata(start, site, WHOLE), pairs, bots, [visitor_pairs],
            [sum(counts.values()), bot_hits])
        _add_to(_entry(raw, DAILY, site, start.replace(hour=0), "day"), hour_entry)
    for day_entry in [entry for (coll, _), entry in raw.items() if coll == DAILY]:
        meta = day_entry[0]
        _add_to(_entry(raw, MONTHLY, meta["site"], meta["date"].replace(day=1), "month"),
                day_entry)
    return raw


def _add_to(entry: tuple, part: tuple) -> None:
    """A document's sums (``_entry``) plus those of a part of it (an hour of a day, a
    day of a month)."""
    entry[1].update(part[1])
    entry[2].update(part[2])
    entry[3].extend(part[3])
    entry[4][0] += part[4][0]
    entry[4][1] += part[4][1]


def _capped_inc(pairs: Counter, bot_pairs: Counter, totals: list[int],
                known: dict[str, set[str]] | None) -> tuple[dict, dict[str, dict]]:
    """One counter document's ``$inc`` and the values it keeps per dimension: each
    dimension capped against the values the document holds (``known``, which grows with
    the values kept; None: unreadable, no new value), the bots counted where ``v`` is."""
    hits, bot_hits = totals
    inc = {"hits": hits, "bh": bot_hits}        # bh even when 0: split
    kept_by_dim = {}
    bots = _by_dimension(bot_pairs)
    for dim, values in _by_dimension(pairs).items():
        have = None if known is None else known.setdefault(dim, set())
        kept = cap(dim, have, values)
        if have is not None:
            have.update(kept)
        kept_by_dim[dim] = kept
        prefix = f"v.{dim}."
        inc.update({prefix + name: n for name, n in kept.items()})  # one each
        bot_inc: dict[str, int] = {}
        for name, n in bots.get(dim, {}).items():
            name = f"b.{dim}.{name if name in kept else escape(OTHER)}"
            bot_inc[name] = bot_inc.get(name, 0) + n
        inc.update(bot_inc)
    return inc, kept_by_dim


def _entry(raw: dict, coll: str, site: str, date: dt.datetime, level: str
           ) -> tuple[dict, Counter, Counter, list, list]:
    """A flush's sums for one counter document (metadata, hits per pair, bot hits per
    pair, (visitor, values) pair sets, [hits, bot hits]), made on first use."""
    key = (coll, sketches.bucket_id(site, date, level))
    entry = raw.get(key)
    if entry is None:
        entry = raw[key] = (schema.metadata(date, site, WHOLE), Counter(), Counter(), [],
                            [0, 0])
    return entry


def hour_unit(site: str, ts: dt.datetime) -> tuple:
    """A hit's pending unit: its site and UTC hour."""
    return ("u", site, ts.year, ts.month, ts.day, ts.hour)


def unit_documents(key: tuple) -> tuple[tuple, tuple, tuple]:
    """The counter documents a unit (``hour_unit``) touches: its hour, day and month."""
    _, site, year, month, day, hour = key
    return ((HOURLY, site, year, month, day, hour), (DAILY, site, year, month, day),
            (MONTHLY, site, year, month))


class DimensionCounts:
    """What ``dims.*`` and the visitor sketches count. A unit is a site's UTC hour:
    ({values tuple: hits}, {(visitor, values tuple)}). Remembers which values each
    document holds (for the caps) and everything this process counted into each sketch
    bucket."""

    def __init__(self, db):
        self.db = db
        self._known: dict[tuple[str, str], dict[str, set[str]]] = {}
        # Everything this process has counted into each sketch bucket, written whole to
        # documents only it writes (their ids carry its owner name): no other writer can
        # race it, and readers take the union of every owner's document.
        self.sketches = BucketSketches()

    @staticmethod
    def open(key: tuple) -> tuple[tuple[dict, set], tuple]:
        return ({}, set()), unit_documents(key)

    add = staticmethod(_add)

    @staticmethod
    def merge(unit: tuple[dict, set], part: tuple[dict, set]) -> None:
        counts, pairs = unit
        for values, n in part[0].items():
            counts[values] = counts.get(values, 0) + n
        pairs |= part[1]

    @staticmethod
    def hits(part: tuple[dict, set]) -> int:
        return sum(part[0].values())

    def documents(self, pending: dict) -> tuple[dict[tuple[str, str], Increment], list]:
        """The capped ``$inc`` of every counter document (each naming this process as an
        owner of the bucket's sketches) and the sketch documents, written before them."""
        raw = _sums(pending)
        known = self._known_values(list(raw))
        incs, flushed = {}, []
        for doc_key, (meta, pairs, bot_pairs, pair_sets, totals) in raw.items():
            inc, kept_by_dim = _capped_inc(pairs, bot_pairs, totals, known.get(doc_key))
            flushed.append((sketches.LEVELS[doc_key[0]], meta, pair_sets, kept_by_dim))
            incs[doc_key] = (meta, inc)
        saved = self.sketches.documents(flushed)
        # Named after the sketches are made: a flush past MAX_SKETCH_BUCKETS writes them
        # as a new owner, which the counters must list.
        owner = {f"owners.{self.sketches.owner}": 1}
        docs = {key: Increment(key[0], meta, inc, owner) for key, (meta, inc) in incs.items()}
        return docs, saved

    @staticmethod
    def save_whole(db, collection: str, docs: list[dict]) -> None:
        sketches.save(db, collection, docs)

    def tick(self, now: dt.datetime) -> None:
        """Nothing to do between flushes."""

    def _known_values(self, keys: list[tuple[str, str]]) -> dict:
        """The values each document holds per dimension: remembered, else read; None
        for a document that could not be read (no new value is admitted to it)."""
        if len(self._known) > MAX_KNOWN:
            self._known.clear()
        known = {key: self._known[key] for key in keys if key in self._known}
        missing: dict[str, list[str]] = {}
        for coll, doc_id in keys:
            if (coll, doc_id) not in known:
                missing.setdefault(coll, []).append(doc_id)
        for coll, ids in missing.items():
            try:
                found = {doc["_id"]: doc.get("v", {}) for doc in
                         self.db[coll].find({"_id": {"$in": ids}}, {"v": 1})}
            except PyMongoError as exc:
                # Unknown contents: new values count under "(other)" in this flush, so
                # the cap holds whatever the document already has.
                log.warning("could not read dimension values (%s); new values count as "
                            "(other) in this flush", exc)
                known.update({(coll, doc_id): None for doc_id in ids})
                continue
            for doc_id in ids:
                values = {dim: set(v) for dim, v in found.get(doc_id, {}).items()}
                self._known[(coll, doc_id)] = known[(coll, doc_id)] = values
        return known


def ensure_indexes(db) -> list[str]:
    """The stats index on the counter and sketch collections; returns their names."""
    for coll in (*COLLECTIONS, *sketches.COLLECTIONS):
        db[coll].create_index(schema.STATS_INDEX, name="site_page_date")
    return [f"{coll}.site_page_date" for coll in (*COLLECTIONS, *sketches.COLLECTIONS)]
