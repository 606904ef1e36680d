"""Hierarchical rollups of the raw events: hourly → daily → weekly and monthly → yearly.

Each rollup document holds one bucket of one site with every page in it
(``documents``: the site's totals, then a row per page with hits, bytes and status
classes). Weeks are ISO weeks (starting Monday, UTC); they do not nest in months, so
monthly buckets come from daily ones, not weekly ones. A level above hourly is the
merge of the documents of the level below that its bucket spans.

Incremental and crash-safe. A run

1. reads the checkpoint C (an ``ingested`` instant) and notes its own start T;
2. finds the hours touched by events with ``ingested >= C`` (late events included: an
   event's ``ingested`` is new even when its ``time`` is old);
3. recomputes each touched bucket *completely* from the level below, level by level,
   and writes it under a deterministic ``_id``;
4. only then advances C to ``T - SETTLE``.

Nothing can count twice: a bucket's value is a pure function of the level below, and
replacing a document by that value any number of times leaves the same document. A crash
between any two steps leaves C where it was, so the next run recomputes a superset of
the same buckets and writes the same values. MongoDB's mapReduce with ``out: {reduce:}``
instead *folds* each run's new partial counts into the stored ones: a run repeated after
a crash before its checkpoint folds the same events in a second time.

``SETTLE`` covers events stamped before T but still in flight (the writer stamps
``ingested`` just before its ``insert_many``) and clocks of different writers a little
apart: the next run reads them again, which costs a few recomputed buckets, never a
wrong count.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from pymongo import ASCENDING

from .. import validation
from ..dimensions import sketches
from ..events import collection as events
from ..events import custom
from ..events import reads as event_reads
from ..stats import schema
from ..visits import build as visits
from . import documents, upgrade
from .documents import write_level

SETTLE = dt.timedelta(seconds=30)
BACKFILLED = documents.BACKFILLED
CHECKPOINT_ID = "rollups"
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
VISITS = "visits"
# Parent buckets recomputed per piece, by key: fewer pieces are fewer reads, frames and
# writes; a piece bounds what is held at once (a week of a site's hours).
CHUNK = {"hour": 7 * 24, "day": 14, "week": 8, "month": 3, "year": 1}
# Each level above hourly: (source level, the parent key its source buckets have).
PARENT = {"daily": ("hourly", "day"), "weekly": ("daily", "week"),
          "monthly": ("daily", "month"), "yearly": ("monthly", "year")}


def ensure_rollup_indexes(db) -> list[str]:
    """The one index each level needs (a site's buckets by start), after moving the
    rollups of an older store into this shape (``upgrade``)."""
    upgrade.move_old_rollups(db)
    keys = [("site", ASCENDING), ("start", ASCENDING)]
    names = [db[schema.ROLLUPS[level]].create_index(keys, name="site_start")
             for level in schema.ROLLUP_LEVELS]
    return names + [db[BACKFILLED].create_index([("site", ASCENDING), ("day", ASCENDING)],
                                                name="site_day")]


def floor(level: str, ts: dt.datetime) -> dt.datetime:
    """The start of the UTC bucket of ``level`` holding ``ts`` (weeks start on Monday)."""
    ts = ts.astimezone(dt.UTC)
    if level == "hourly":
        return ts.replace(minute=0, second=0, microsecond=0)
    day = dt.datetime(ts.year, ts.month, ts.day, tzinfo=dt.UTC)
    if level == "daily":
        return day
    if level == "weekly":
        return day - dt.timedelta(days=day.weekday())
    if level == "monthly":
        return day.replace(day=1)
    return day.replace(month=1, day=1)


def next_start(level: str, start: dt.datetime) -> dt.datetime:
    """The start of the bucket of ``level`` after the one starting at ``start``."""
    if level == "hourly":
        return start + dt.timedelta(hours=1)
    if level == "daily":
        return start + dt.timedelta(days=1)
    if level == "weekly":
        return start + dt.timedelta(days=7)
    if level == "monthly":
        return (start + dt.timedelta(days=32)).replace(day=1)
    return start.replace(year=start.year + 1)


def parents(level: str, start: dt.datetime) -> dict[str, dt.datetime]:
    """The parent-bucket starts stored on a document of ``level``."""
    if level == "hourly":
        return {"day": floor("daily", start)}
    if level == "daily":
        return {"week": floor("weekly", start), "month": floor("monthly", start)}
    if level == "monthly":
        return {"year": floor("yearly", start)}
    return {}


@dataclass
class RollupRun:
    """What one run did: the ``ingested`` window read and the buckets rewritten."""

    since: dt.datetime
    read_until: dt.datetime
    buckets: dict[str, int] = field(default_factory=dict)
    documents: dict[str, int] = field(default_factory=dict)
    duration_s: float = 0.0
    expired: int = 0
    sketches_merged: int = 0   # visitor sketch documents merged by the compaction
    visit_days: int = 0        # visit documents (site and UTC day) rewritten
    touched: dict = field(default_factory=dict, repr=False)      # per site, hours read
    started: float = field(default=0.0, repr=False)              # perf_counter
    hourly: Callable[[], list] | None = field(default=None, repr=False)
    visits: Callable[[], list] | None = field(default=None, repr=False)
    catching_up: bool = field(default=False, repr=False)
    kept: dict = field(default_factory=dict, repr=False)        # see ``Kept``


def run_rollups(db, now: dt.datetime | None = None, retention: int | None = None,
                workers=None) -> RollupRun:
    """One incremental run (see the module docstring for why it is safe to repeat); with
    ``retention`` (days), then the events it has read and that are older are expired.
    Each run also compacts the visitor sketches of the buckets closed since the last one
    (``dimensions.sketches.compact_due``): this is what runs periodically (the server's
    rollup job, ``hitboard rollup [--every]``, an ingest's final run). ``workers``
    (``parallel.RollupWorkers``, an ingest's) changes nothing: every piece is computed
    here."""
    return finish_rollups(db, start_rollups(db, now, workers), retention, workers)


def start_rollups(db, now: dt.datetime | None = None, workers=None) -> RollupRun:
    """A run's first steps: its window and the hours it touches read, and their hourly
    buckets and visits (``queries.visits.build``; every kept event's hours once, for a
    store older than visits) computed. :func:`finish_rollups` does the rest."""
    started = time.perf_counter()
    read_until = validation.timestamp(now) if now else dt.datetime.now(dt.UTC)
    run = RollupRun(checkpoint(db)["watermark"], read_until)
    run.touched = event_reads.touched_hours(db, run.since)
    run.started = started
    run.hourly = _level(db, "hourly", run.touched, workers, run.kept)
    run.catching_up = not visits.is_caught_up(db)
    since = EPOCH if run.catching_up else run.since
    hours = event_reads.touched_hours(db, EPOCH) if run.catching_up else run.touched
    run.visits = _visits(db, _joined(hours, custom.touched_hours(db, since)), workers)
    return run


def finish_rollups(db, run: RollupRun, retention: int | None = None,
                   workers=None) -> RollupRun:
    """The rest of a run :func:`start_rollups` began: every level written, the checkpoint
    advanced, old events expired (``retention``), due sketches compacted."""
    roll_hours(db, run.touched, run, workers)
    if run.visits is not None:
        run.visit_days = sum(days for days, _ in run.visits())
        if run.catching_up:
            visits.caught_up(db, run.visit_days)
    run.duration_s = time.perf_counter() - run.started
    watermark = _advance(db, run)
    if retention is not None:
        run.expired = events.expire(db, retention, watermark, run.read_until)
        custom.expire(db, events.cutoff(retention, watermark, run.read_until))
    run.sketches_merged = sketches.compact_due(db, run.read_until)
    return run


def roll_hours(db, touched: dict[str, set[dt.datetime]], run: RollupRun | None = None,
               workers=None) -> None:
    """Recompute every bucket, at every level, holding one of the ``touched`` hours (per
    site); the checkpoint is left alone. A backfill calls it for the hours it wrote.
    Each level is computed and written a few parent buckets at a time (``CHUNK``), so a
    year of a thousand pages (~9 million hourly buckets) is never held in memory; a
    level's rows feed the level above from memory while they fit (``_keep``). The
    hourly level of a started ``run`` is done already."""
    started = {}
    kept = run.kept if run is not None else {}
    if run is not None and run.hourly is not None:
        started["hourly"] = run.hourly
    for level in schema.ROLLUP_LEVELS:
        if level in PARENT:
            _done(PARENT[level][0], started, run)
        if level not in started:
            started[level] = _level(db, level, touched, workers, kept)
        for source in [name for name in kept if name not in _KEPT_FOR_AFTER[level]]:
            del kept[source]
    for level in list(started):
        _done(level, started, run)
    if run is not None:             # in level order, however they ended
        run.buckets = {level: run.buckets[level] for level in schema.ROLLUP_LEVELS}
        run.documents = {level: run.documents[level] for level in schema.ROLLUP_LEVELS}


def _done(level: str, started: dict, run: RollupRun | None) -> None:
    """Wait for ``level`` (if still running) and note what it wrote in ``run``."""
    results = started.pop(level, None)
    if results is None:
        return
    written = buckets = 0
    for part_written, part_buckets in results():
        written += part_written
        buckets += part_buckets
    if run is not None:
        run.buckets[level] = buckets
        run.documents[level] = written


def _level(db, level: str, touched: dict[str, set[dt.datetime]], workers, kept=None):
    """The ``level`` buckets of the touched hours, started: a function returning each
    piece's (documents written, buckets) once done. Computed here, each piece keeps its
    rows in ``kept`` for the level above (see ``_keep``)."""
    key = "hour" if level == "hourly" else PARENT[level][1]
    wanted = touched if level == "hourly" else touched_keys(touched, key)
    results = [roll_part(db, level, part, kept) for part in _chunked(wanted, CHUNK[key])]
    return lambda: results


def roll_part(db, level: str, part: dict[str, set[dt.datetime]],
              kept: dict | None = None) -> tuple[int, int]:
    """Recompute and write the ``level`` buckets of ``part`` (per site, starts of hours or
    of the level's parent buckets; ``VISITS``: the visits of those hours); returns
    (documents written, buckets). ``kept``: rows of the level below computed by this
    run, read instead of their documents, and where this level's rows are kept."""
    if level == VISITS:
        return visits.recompute(db, part), 0
    if level == "hourly":
        docs = _hourly_documents(db, part, kept)
    else:
        docs = _level_documents(db, level, PARENT[level][0], part, kept)
    return write_level(db, level, docs), len({(d["site"], d["start"]) for d in docs})


def _visits(db, hours: dict[str, set[dt.datetime]], workers):
    """The visits of ``hours`` (per site), a piece per site: each of its days and months
    is summed once."""
    results = [roll_part(db, VISITS, {site: found}) for site, found in hours.items()]
    return lambda: results


def _joined(*touched: dict[str, set[dt.datetime]]) -> dict[str, set[dt.datetime]]:
    """Touched hours per site, from several sources, in one dict (none changed)."""
    joined: dict[str, set[dt.datetime]] = {}
    for found in touched:
        for site, hours in found.items():
            joined.setdefault(site, set()).update(hours)
    return joined


def _chunked(wanted: dict[str, set[dt.datetime]], size: int):
    """``wanted`` (per site, parent bucket starts) as pieces of at most ``size`` starts."""
    for site, starts in wanted.items():
        ordered = sorted(starts)
        for i in range(0, len(ordered), size):
            yield {site: set(ordered[i:i + size])}


def checkpoint(db) -> dict:
    doc = db[schema.CHECKPOINTS].find_one({"_id": CHECKPOINT_ID}) or {}
    return {"watermark": doc.get("watermark", EPOCH), "last_run": doc.get("last_run"),
            "read_until": doc.get("read_until"), "duration_s": doc.get("duration_s"),
            "documents": doc.get("documents", {})}


def _advance(db, run: RollupRun) -> dt.datetime:
    watermark = max(run.since, run.read_until - SETTLE)
    db[schema.CHECKPOINTS].replace_one(
        {"_id": CHECKPOINT_ID},
        {"watermark": watermark, "read_until": run.read_until,
         "last_run": dt.datetime.now(dt.UTC), "duration_s": run.duration_s,
         "documents": run.documents},
        upsert=True,
    )
    return watermark


def touched_keys(touched: dict[str, set[dt.datetime]], key: str) -> dict[str, set]:
    """The parent buckets (``day``, ``week``, ``month``, ``year``) of the touched hours."""
    out: dict[str, set[dt.datetime]] = {}
    for site, hours in touched.items():
        days = {parents("hourly", h)["day"] for h in hours}
        if key == "day":
            out[site] = days
        elif key in ("week", "month"):
            out[site] = {parents("daily", d)[key] for d in days}
        else:
            months = {parents("daily", d)["month"] for d in days}
            out[site] = {parents("monthly", m)["year"] for m in months}
    return out


def _hourly_documents(db, touched: dict[str, set[dt.datetime]], kept: dict | None = None
                      ) -> list[dict]:
    """Touched hours recomputed from every event of those hours (``hourly``: their
    columns summed per hour and page), plus their backfilled history."""
    from . import hourly  # Polars (~40 MB): only in a process that rolls up

    docs = []
    for site, hours in touched.items():
        found, frame = hourly.hour_rows(db, site, hours)
        for start, (rows, totals) in sorted(found.items()):
            docs += documents.build_rows("hourly", site, start, rows, totals)
        _keep(kept, "hourly", site, frame, found)
    return docs


def _level_documents(db, level: str, source: str, wanted: dict[str, set[dt.datetime]],
                     kept: dict | None = None) -> list[dict]:
    """Buckets of ``level`` recomputed by merging the ``source`` buckets they span
    (``merged``: every bucket of a piece summed in one Polars group-by): those this run
    computed and kept from their rows, the others from their stored documents."""
    from . import merged  # Polars (~40 MB): only in a process that rolls up

    docs = []
    coll = db[schema.ROLLUPS[source]]
    for site, starts in wanted.items():
        starts = sorted(starts)
        ends = [next_start(level, start) for start in starts]
        frames, computed = (kept or {}).get(source, {}).get(site, ([], set()))
        decoded = [(i, documents.rows(doc)) for i, (start, end) in enumerate(
                   zip(starts, ends, strict=True))
                   for doc in coll.find({"site": site, "start": {"$gte": start, "$lt": end}},
                                        {"pages": 1, "start": 1})
                   if validation.timestamp(doc["start"]) not in computed]
        found, frame = merged.merged(starts, decoded, merged.within(frames, starts, ends))
        for start, (rows, totals) in found.items():
            docs += documents.build_rows(level, site, start, rows, totals)
        _keep(kept, level, site, merged.started(frame, starts), found)
    return docs


# Which kept rows a level's computation leaves needed, by level: rows a run computed
# feed the levels above it (``_keep``).
_KEPT_FOR_AFTER = {"hourly": {"hourly"}, "daily": {"daily"}, "weekly": {"daily"},
                   "monthly": {"monthly"}, "yearly": set()}
_KEPT_LEVELS = {"hourly", "daily", "monthly"}
KEEP_ROWS = 500_000       # rows kept at most, all levels together (~110 bytes a row)


def _keep(kept: dict | None, level: str, site: str, frame, found: dict) -> None:
    """Keep a piece's rows (``frame``: ``start`` ms, ``page``, counts) for the level
    above, which then reads them rather than decode the documents just written: while
    the rows kept stay under ``KEEP_ROWS``, to bound the memory a long run holds (the
    buckets not kept are read from their documents)."""
    if kept is None or frame is None or level not in _KEPT_LEVELS:
        return
    held = sum(f.height for by_site in kept.values() for frames, _ in by_site.values()
               for f in frames)
    if held + frame.height > KEEP_ROWS:
        return
    frames, computed = kept.setdefault(level, {}).setdefault(site, ([], set()))
    frames.append(frame)
    computed.update(found)
