"""History written directly as pre-aggregated documents, not hit by hit.

A caller hands over per-minute counts of whole days (numpy arrays); each daily document's
``daily``, ``hourly`` and ``minute`` counters, each monthly document's ``daily`` counters,
and the whole-site ``*`` documents (the sum of the pages) are computed in memory and
written in bulk, one write per document per batch: a document that does not exist yet is
inserted whole (the cheap write: on the embedded store about half the cost of an upsert);
one that exists gets its counters added with ``$inc``.

Never a replacement: the day in progress and its month may already hold live counts (the
recorder keeps writing while a backfill runs), and a replacement would erase them. The
price is that a second backfill of the same days adds its hits on top: the totals
returned always say exactly what was added.

History has no raw events, yet the Rollups page must show it: each page's hours are also
added to ``rollups.backfilled`` with plausible bytes and status classes (a fixed mix drawn
per site-day, reproducible), and the rollups of every hour written are recomputed, so
rollup hits equal the pre-aggregated hits from the first look."""

from __future__ import annotations

import datetime as dt
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from pymongo import UpdateOne

from .. import bulk, validation
from ..errors import InvalidRangeError
from ..rollups import build as rollups
from ..stats import schema
from ..validation import WHOLE_SITE

MINUTES_PER_DAY = 1440
MAX_DAYS = 400
BATCH_DOCUMENTS = 256
# The backfilled history's status mix, and the bytes of a response that is not a 2xx.
STATUS_MIX = {"2xx": 0.93, "3xx": 0.045, "4xx": 0.02, "5xx": 0.005}
OTHER_BYTES = {"3xx": 250, "4xx": 550, "5xx": 300}

Progress = Callable[[int, int], None]
_KEYS = [str(i) for i in range(60)]    # counter names of hours and minutes, made once


@dataclass(frozen=True)
class DayCounts:
    """Hits of one site on one UTC day: ``counts[i, m]`` for ``pages[i]`` at minute ``m``;
    ``bots``, if known, the bot hits among them (same shape)."""

    site: str
    day: dt.datetime
    pages: Sequence[str]
    counts: np.ndarray
    bots: np.ndarray | None = None


@dataclass
class BackfillTotals:
    """What a backfill added: hits per (site, page), ``*`` included; documents inserted,
    and document updates (existing documents, or a month spanning two batches)."""

    by_page: Counter = field(default_factory=Counter)
    new_documents: int = 0
    updated_documents: int = 0
    rollup_documents: int = 0

    @property
    def hits(self) -> int:
        return sum(n for (_, page), n in self.by_page.items() if page == WHOLE_SITE)

    def site_hits(self, site: str) -> int:
        return self.by_page[(site, WHOLE_SITE)]


def check_days(days) -> int:
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_DAYS:
        raise InvalidRangeError(f"backfill days must be an integer from 1 to {MAX_DAYS}, "
                                f"got {days!r}")
    return days


def backfill(db, days: Iterable[DayCounts], total: int | None = None,
             progress: Progress | None = None) -> BackfillTotals:
    """Add the hits of ``days`` to ``stats.daily`` and ``stats.monthly``. ``progress(done,
    total)`` is called after each batch with site-days written (``total`` if known)."""
    totals = BackfillTotals()
    batch = _Batch()
    done = 0
    touched: dict[str, set[dt.datetime]] = defaultdict(set)
    for item in days:
        batch.add(_checked(item))
        done += 1
        if batch.documents >= BATCH_DOCUMENTS:
            batch.write(db, totals, touched)
            batch = _Batch()
            if progress:
                progress(done, total or done)
    batch.write(db, totals, touched)
    run = rollups.RollupRun(dt.datetime.now(dt.UTC), dt.datetime.now(dt.UTC))
    rollups.roll_hours(db, touched, run)
    totals.rollup_documents = sum(run.documents.values())
    if progress:
        progress(done, total or done)
    return totals


def _checked(item: DayCounts) -> DayCounts:
    site = validation.site(item.site)
    pages = [validation.page(p) for p in item.pages]
    if WHOLE_SITE in pages or len(set(pages)) != len(pages):
        raise InvalidRangeError("backfill pages must be distinct pages, '*' excluded")
    day = validation.timestamp(item.day)
    if day != schema.day_start(day):
        raise InvalidRangeError(f"backfill day {day.isoformat()} is not a UTC midnight")
    counts = np.asarray(item.counts)
    if counts.shape != (len(pages), MINUTES_PER_DAY) or counts.dtype.kind not in "iu":
        raise InvalidRangeError(f"backfill counts must be integers of shape "
                                f"({len(pages)}, {MINUTES_PER_DAY}), got {counts.shape}")
    if len(counts) and counts.min() < 0:
        raise InvalidRangeError("backfill counts must not be negative")
    bots = np.zeros_like(counts) if item.bots is None else np.asarray(item.bots)
    if bots.shape != counts.shape or bots.dtype.kind not in "iu" or (
            len(bots) and (bots.min() < 0 or (bots > counts).any())):
        raise InvalidRangeError("backfill bot counts must be integers of the counts' shape, "
                                "0 to the hits of each minute")
    return DayCounts(site, day, pages, counts.astype("int64"), bots.astype("int64"))


class _Batch:
    """Daily documents of a few site-days plus their months' daily counters, summed."""

    def __init__(self):
        self.daily: dict[str, tuple[dict, dict]] = {}      # _id: (fixed fields, counters)
        # (month, site, page) -> [hits, bot hits] per day of the month
        self.monthly: dict[tuple[dt.datetime, str, str], np.ndarray] = {}
        self.hits: Counter = Counter()
        self.seeds: dict[str, tuple[dict, dict]] = {}   # rollups.backfilled
        self.hours: dict[str, set[dt.datetime]] = defaultdict(set)

    @property
    def documents(self) -> int:
        return len(self.daily)

    def add(self, item: DayCounts) -> None:
        site, day = item.site, item.day
        month = schema.month_start(day)
        rows = [(page, item.counts[i], item.bots[i]) for i, page in enumerate(item.pages)]
        rows.append((WHOLE_SITE, item.counts.sum(axis=0), item.bots.sum(axis=0)))
        for page, minutes, bots in rows:
            hits = int(minutes.sum())
            if not hits:
                continue
            self.daily[schema.daily_id(day, site, page)] = (
                {"metadata": schema.metadata(day, site, page)}, daily_counters(minutes, bots))
            days = self.monthly.setdefault((month, site, page),
                                           np.zeros((2, 32), dtype="int64"))
            days[:, day.day] += (hits, int(bots.sum()))
            self.hits[(site, page)] += hits
        self._add_seeds(item)

    def _add_seeds(self, item: DayCounts) -> None:
        """Each page's hours with hits, bytes and status classes (see ``STATUS_MIX``)."""
        hourly = item.counts.reshape(len(item.pages), 24, 60).sum(axis=2)
        rng = np.random.default_rng(zlib.crc32(f"{item.site}/{item.day:%Y%m%d}".encode()))
        mix = rng.multinomial(hourly, list(STATUS_MIX.values()))   # pages × 24 × classes
        for i, page in enumerate(item.pages):
            size = 800 + zlib.crc32(page.encode()) % 40_000    # this page's body, bytes
            hours = {}
            for hour in np.flatnonzero(hourly[i]):
                status = dict(zip(STATUS_MIX, (int(n) for n in mix[i, hour]), strict=True))
                bytes_ = status["2xx"] * size + sum(status[c] * b for c, b in OTHER_BYTES.items())
                hours[str(hour)] = {"hits": int(hourly[i, hour]), "bytes": int(bytes_),
                                    "status": status}
                self.hours[item.site].add(item.day + dt.timedelta(hours=int(hour)))
            if hours:
                self.seeds[schema.daily_id(item.day, item.site, page)] = (
                    {"site": item.site, "page": page, "day": item.day}, {"hours": hours})

    def write(self, db, totals: BackfillTotals, touched: dict[str, set]) -> None:
        monthly = {schema.monthly_id(month, site, page):
                   ({"metadata": schema.metadata(month, site, page)}, monthly_counters(days))
                   for (month, site, page), days in self.monthly.items()}
        for collection, docs in ((schema.DAILY, self.daily), (schema.MONTHLY, monthly)):
            inserted, added = _insert_or_add(db[collection], docs)
            totals.new_documents += inserted
            totals.updated_documents += added
        totals.by_page.update(self.hits)
        _insert_or_add(db[rollups.BACKFILLED], self.seeds)
        for site, hours in self.hours.items():
            touched[site] |= hours


def _insert_or_add(collection, docs: dict[str, tuple[dict, dict]]) -> tuple[int, int]:
    """``docs``: {_id: (fixed fields, counters)}. Insert the documents that do not exist
    yet (whole, the cheap write) and ``$inc`` the others' counters. One the live
    recorder creates between our look-up and our insert fails with a duplicate key and
    is added with ``$inc`` instead: nothing is overwritten. The look-up's cost follows
    the batch, not the history already stored (``bulk.find_by_ids``). Returns
    (inserted, incremented)."""
    if not docs:
        return 0, 0
    ids = list(docs)
    existing = {d["_id"] for d in bulk.find_by_ids(collection, ids, {"_id": 1})}
    fresh = [i for i in ids if i not in existing]
    late = {fresh[n] for n in bulk.insert_new(
        collection, [{"_id": i, **docs[i][0], **docs[i][1]} for i in fresh])}
    again = [i for i in ids if i in existing or i in late]
    if again:
        collection.bulk_write([
            UpdateOne({"_id": i}, {"$inc": dict(_flatten(docs[i][1])),
                                   "$setOnInsert": docs[i][0]}, upsert=True)
            for i in again], ordered=False)
    return len(fresh) - len(late), len(again)


def daily_counters(minutes: np.ndarray, bots: np.ndarray | None = None) -> dict:
    """A daily document's counters from its 1440 minute counts, and those of its bot
    hits (``schema.BOTS``, always there: 0 without bots); zeros are left out, as live
    traffic leaves them out."""
    counters = _day_counters(minutes)
    counters[schema.BOTS] = (_day_counters(bots) if bots is not None and bots.any()
                             else {"daily": 0})
    return counters


def _day_counters(minutes: np.ndarray) -> dict:
    hourly, minute = {}, {}
    for hour, row in enumerate(minutes.reshape(24, 60).tolist()):
        if total := sum(row):
            hourly[_KEYS[hour]] = total
            minute[_KEYS[hour]] = {_KEYS[m]: n for m, n in enumerate(row) if n}
    return {"daily": int(minutes.sum()), "hourly": hourly, "minute": minute}


def monthly_counters(days: np.ndarray) -> dict:
    """A monthly document's counters from [hits, bot hits] per day of the month."""
    hits, bots = days
    return {"monthly": int(hits.sum()),
            "daily": {str(d): int(hits[d]) for d in np.flatnonzero(hits)},
            schema.BOTS: {"monthly": int(bots.sum()),
                          **({"daily": {str(d): int(bots[d]) for d in np.flatnonzero(bots)}}
                             if bots.any() else {})}}


def _flatten(counters: dict, prefix: str = ""):
    """``{"hourly": {"3": 5}}`` → ``("hourly.3", 5)``: the ``$inc`` of nested counters."""
    for key, value in counters.items():
        if isinstance(value, dict):
            yield from _flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value
