"""A DimensionRecorder's visitor sketches: everything one writing process has counted
into each bucket, turned into its sketch documents (see ``sketches``) at every flush.

Hours and days are updated visitor by visitor from the flush's (visitor, values) pairs.
A month is the union of its days: its sketches take the union of the sketches its days
updated in the flush (a union is idempotent, so a day's whole state can be added again
and again), where updating them visitor by visitor again would cost as much as the days
did. A value a day's counters sent to ``(other)`` (its cap was full) may be one the
month's counters kept: the day's ``(other)`` sketch cannot be split, so the flush also
counts such a value's visitors in a sketch of its own, for the month.
"""

from __future__ import annotations

import datetime as dt
import uuid
from itertools import chain, groupby
from operator import itemgetter

from datasketches import hll_union, tgt_hll_type

from . import sketches
from .classify import BOT
from .encoding import OTHER, escape

IS_BOT = ("bot", BOT)
MAX_SKETCH_BUCKETS = 500  # sketch buckets held in memory before starting new documents
_VISITOR = itemgetter(0)
_LEVELS = ("hour", "day", "month")


class _Bucket:
    """What this process has counted into one bucket: everyone, the human visitors, and
    (days and months) a sketch per (dimension, value, is bot); a month's are unions
    (``_merge_into``)."""

    __slots__ = ("overall", "people", "by_dim")

    def __init__(self):
        self.overall, self.people = sketches.new(), sketches.new()
        self.by_dim: dict[str, dict[tuple[str, bool], object]] = {}


class _PairSketches(dict):
    """(dimension, value) -> the day sketch a visitor with that pair updates, made on
    first use: the humans' or the bots' sketch of the value (a visitor goes into one of
    them, so humans are read alone and everyone is their union). A value the counters'
    cap summed under (other) updates the (other) sketch and a sketch of its own for the
    flush (``alone``), which its month takes if it keeps the value."""

    def __init__(self, bucket: _Bucket, kept: dict[str, dict], is_bot: bool):
        super().__init__()
        self.by_dim, self.kept, self.is_bot = bucket.by_dim, kept, is_bot
        self.alone: dict[tuple[str, str], object] = {}

    def __missing__(self, pair: tuple[str, str]):
        dim, value = pair
        spilled = escape(value) not in self.kept.get(dim, ())
        per_value = self.by_dim.setdefault(dim, {})
        key = (OTHER if spilled else value, self.is_bot)
        sketch = per_value.get(key)
        if sketch is None:
            sketch = per_value[key] = sketches.new(sketches.LG_K_VALUE)
        if spilled:
            alone = self.alone[pair] = sketches.new(sketches.LG_K_VALUE)
            sketch = _Both(sketch, alone)
        self[pair] = sketch
        return sketch


class _Both:
    """Two sketches updated as one."""

    __slots__ = ("first", "second")

    def __init__(self, first, second):
        self.first, self.second = first, second

    def update(self, visitor: str) -> None:
        self.first.update(visitor)
        self.second.update(visitor)


class _DayFlush:
    """What a month needs of one of its days in a flush: the day's bucket and the value
    sketches the flush updated (humans', bots')."""

    __slots__ = ("bucket", "humans", "bots")

    def __init__(self, bucket, humans, bots):
        self.bucket, self.humans, self.bots = bucket, humans, bots


class BucketSketches:
    """The sketches of the buckets one writer has counted, and its ``owner`` name (the
    documents it writes are its own). :meth:`documents` adds a flush and returns the
    sketch documents to save."""

    def __init__(self):
        self._buckets: dict[tuple, _Bucket] = {}
        self.owner = uuid.uuid4().hex[:12]
        self._saves = 0

    def documents(self, flushed: list[tuple[str, dict, list[set], dict]]
                  ) -> list[tuple[str, dict]]:
        """``flushed``: (level, counter metadata, (visitor, values) pair sets, values the
        counters kept per dimension) of each counter document of a flush. Past
        ``MAX_SKETCH_BUCKETS`` everything is forgotten first and the flush starts
        documents of a new owner (readers take the union of every owner's)."""
        if len(self._buckets) + len(flushed) > MAX_SKETCH_BUCKETS:
            self._buckets.clear()
            self.owner = uuid.uuid4().hex[:12]
        self._saves += 1
        out: list[tuple[str, dict]] = []
        days: dict[tuple[str, dt.datetime], list[_DayFlush]] = {}
        for level, meta, pair_sets, kept in sorted(flushed,
                                                   key=lambda f: _LEVELS.index(f[0])):
            bucket = self._bucket(level, meta)
            if level == "hour":
                _count_hour(bucket, pair_sets)
                touched: set[str] = set()
            elif level == "day":
                day = _count_day(bucket, pair_sets, kept)
                days.setdefault((meta["site"], meta["date"].replace(day=1)), []).append(day)
                touched = {dim for dim, _ in day.humans} | {dim for dim, _ in day.bots}
            else:
                touched = _count_month(bucket, days.get((meta["site"], meta["date"]), ()),
                                       kept)
            out.extend(self._docs(level, meta, bucket, touched))
        return out

    def _bucket(self, level: str, meta: dict) -> _Bucket:
        key = (level, meta["site"], meta["date"])
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket()
        return bucket

    def _docs(self, level: str, meta: dict, bucket: _Bucket, dims: set[str]) -> list:
        """The bucket's whole-site document and the value documents of ``dims``."""
        date, site = meta["date"], meta["site"]
        out = [(sketches.TOTALS[level], {**sketches.partial_doc(
            sketches.partial_id(self.owner, level, date, site), meta, bucket.overall,
            bucket.people), "n": self._saves})]
        for dim in sorted(dims):
            doc_id = sketches.partial_id(self.owner, level, date, site, dim)
            values = bucket.by_dim[dim]
            if level == "month":                # unions (see _merge_into)
                values = {key: held.get_result(tgt_hll_type.HLL_4)
                          for key, held in values.items()}
            out.append((sketches.VALUES, {**sketches.value_doc(
                doc_id, meta, level, dim, values), "n": self._saves}))
        return out


def _count_hour(bucket: _Bucket, pair_sets: list[set]) -> None:
    for visitor in {visitor for pairs in pair_sets for visitor, _ in pairs}:
        bucket.overall.update(visitor)
    for visitor in {visitor for pairs in pair_sets for visitor, values in pairs
                    if IS_BOT not in values}:
        bucket.people.update(visitor)


def _count_day(bucket: _Bucket, pair_sets: list[set], kept: dict[str, dict]) -> _DayFlush:
    """Each sketch gets each visitor once: the pairs are sorted by visitor and a
    visitor's values (which share most values: browser, country...) gathered in sets
    reused from visitor to visitor (a sketch update costs more than a set insertion,
    and nothing per visitor outlives its turn)."""
    overall, people = bucket.overall, bucket.people
    humans = _PairSketches(bucket, kept, False)
    bots = _PairSketches(bucket, kept, True)
    human_pairs, bot_pairs, targets = set(), set(), set()
    ordered = sorted(chain.from_iterable(pair_sets), key=_VISITOR)
    for visitor, group in groupby(ordered, key=_VISITOR):
        overall.update(visitor)
        found = [values for _, values in group]
        if len(found) == 1:               # one values tuple: one sketch a dimension
            values = found[0]
            if IS_BOT in values:
                sketches_of = bots
            else:
                sketches_of = humans
                people.update(visitor)
            for sketch in map(sketches_of.__getitem__, values):
                sketch.update(visitor)
            continue
        human_pairs.clear()
        bot_pairs.clear()
        targets.clear()
        for values in found:
            (bot_pairs if IS_BOT in values else human_pairs).update(values)
        if human_pairs:
            people.update(visitor)
        targets.update(map(humans.__getitem__, human_pairs))
        targets.update(map(bots.__getitem__, bot_pairs))
        for sketch in targets:
            sketch.update(visitor)
    return _DayFlush(bucket, humans, bots)


def _count_month(bucket: _Bucket, days, kept: dict[str, dict]) -> set[str]:
    """The month's sketches, adding the flush's days; returns the dimensions touched."""
    touched: set[str] = set()
    for day in days:
        bucket.overall = sketches.union((bucket.overall, day.bucket.overall))
        bucket.people = sketches.union((bucket.people, day.bucket.people))
        for day_sketches in (day.humans, day.bots):
            alone = day_sketches.alone
            for pair, sketch in day_sketches.items():
                _merge_into(bucket, kept, day_sketches.is_bot, pair, alone.get(pair, sketch))
            touched.update(dim for dim, _ in day_sketches)
    return touched


def _merge_into(bucket: _Bucket, kept: dict[str, dict], is_bot: bool,
                pair: tuple[str, str], sketch) -> None:
    """The day's ``sketch`` added to the month's union of ``pair`` (its value, or
    (other) if the month's counters sent it there). A month holds unions, not sketches:
    adding to one is a single call, and its sketch is made when it is saved."""
    dim, value = pair
    if escape(value) not in kept.get(dim, ()):
        value = OTHER
    per_value = bucket.by_dim.setdefault(dim, {})
    held = per_value.get((value, is_bot))
    if held is None:
        held = per_value[(value, is_bot)] = hll_union(sketches.LG_K_VALUE)
    held.update(sketch)
