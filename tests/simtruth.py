"""The truth of a simulated schedule and its checker: what each writer acknowledged
(``acked``) and what it took but never acknowledged, then lost with a killed writer
(``doubt``: it may be stored, in part or whole, or not at all). Every stored counter must
lie between the count of the acknowledged hits and that of all hits taken: nothing
acknowledged lost, nothing counted twice. Without a killed writer the two are equal.

The expected documents are computed here from the hits, on their own (UTC days, hours,
minutes and months walked in Python), not by hitboard's counting."""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import oracle

from queries.dimensions.counters import DAILY as DIMS_DAILY
from queries.dimensions.counters import HOURLY as DIMS_HOURLY
from queries.dimensions.counters import MONTHLY as DIMS_MONTHLY
from queries.events import buckets
from queries.rollups import documents
from queries.stats import schema
from queries.visits.store import VISITS

WHOLE = "*"
SKIP = frozenset({"_id", "metadata", schema.FLUSHES, "owners"})


@dataclass(frozen=True)
class Hit:
    site: str
    page: str
    ts: dt.datetime
    bot: bool = False
    dims: tuple[tuple[str, str], ...] = ()   # (dimension, value) pairs, when counted


@dataclass
class Ledger:
    """What became of one writer kind's hits (or events: ``(site, ms)`` keys)."""

    acked: list = field(default_factory=list)
    doubt: list = field(default_factory=list)


@dataclass
class Truth:
    """The ledgers checked: the stats counters, the dimension counters (``values``:
    their per-dimension sums too, when the hits name their dimensions), raw events."""

    stats: Ledger | None = None
    dims: Ledger | None = None
    events: Ledger | None = None
    values: bool = True
    rollups: Ledger | None = None     # rebuilt from the raw events: exact, no doubt
    visits: tuple[str, list[str]] | None = None   # (site, log lines): oracle's visits


def _day(ts: dt.datetime) -> dt.datetime:
    return dt.datetime(ts.year, ts.month, ts.day, tzinfo=dt.UTC)


def stats_cells(hits: list[Hit]) -> dict[tuple, Counter]:
    """Every stats document's counters the hits make, by (collection, site, page,
    date): the page's and the whole site's."""
    cells: dict[tuple, Counter] = defaultdict(Counter)
    for hit in hits:
        day, h, m = _day(hit.ts), hit.ts.hour, hit.ts.minute
        month = day.replace(day=1)
        for page in {hit.page, WHOLE}:
            daily = cells[(schema.DAILY, hit.site, page, day)]
            monthly = cells[(schema.MONTHLY, hit.site, page, month)]
            prefixes = ("", f"{schema.BOTS}.") if hit.bot else ("",)
            for p in prefixes:
                for path in (f"{p}daily", f"{p}hourly.{h}", f"{p}minute.{h}.{m}"):
                    daily[path] += 1
                monthly[f"{p}monthly"] += 1
                monthly[f"{p}daily.{hit.ts.day}"] += 1
    return cells


def dims_cells(hits: list[Hit]) -> dict[tuple, Counter]:
    """Every dimension document's hits, bot hits, and hits summed per dimension (a
    value past a cap or unknown counts as "(other)": the sum is what is checked)."""
    cells: dict[tuple, Counter] = defaultdict(Counter)
    for hit in hits:
        hour = hit.ts.replace(minute=0, second=0, microsecond=0)
        for coll, date in ((DIMS_HOURLY, hour), (DIMS_DAILY, _day(hit.ts)),
                           (DIMS_MONTHLY, _day(hit.ts).replace(day=1))):
            cell = cells[(coll, hit.site, WHOLE, date)]
            cell["hits"] += 1
            cell["bh"] += hit.bot
            for dim, _ in hit.dims:
                cell[f"v.{dim}"] += 1
                cell[f"b.{dim}"] += hit.bot
    return cells


def flatten(doc: dict, prefix: str = "") -> Counter:
    out = Counter()
    for key, value in doc.items():
        if not prefix and key in SKIP:
            continue
        if isinstance(value, dict):
            out.update(flatten(value, f"{prefix}{key}."))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            out[f"{prefix}{key}"] += value
    return out


def stored_stats(db) -> dict[tuple, Counter]:
    cells = {}
    for coll in (schema.DAILY, schema.MONTHLY):
        for doc in db[coll].find({}):
            meta = doc["metadata"]
            cells[(coll, meta["site"], meta["page"], _utc(meta["date"]))] = flatten(doc)
    return cells


def stored_dims(db, values: bool = True) -> dict[tuple, Counter]:
    cells = {}
    for coll in (DIMS_HOURLY, DIMS_DAILY, DIMS_MONTHLY):
        for doc in db[coll].find({}):
            meta = doc["metadata"]
            cell = Counter({"hits": doc.get("hits", 0), "bh": doc.get("bh", 0)})
            for side in ("v", "b") if values else ():
                for dim, counts in doc.get(side, {}).items():
                    cell[f"{side}.{dim}"] += sum(counts.values())
            cells[(coll, meta["site"], meta["page"], _utc(meta["date"]))] = cell
    return cells


def stored_events(db) -> dict[tuple, Counter]:
    found: dict[tuple, Counter] = defaultdict(Counter)
    for bucket in db[schema.EVENTS].find({}, {"site": 1, "t": 1, "n": 1}):
        for ms in buckets.times(bucket):
            found[(bucket["site"], ms)]["events"] += 1
    return found


def _utc(when: dt.datetime) -> dt.datetime:
    return when.replace(tzinfo=dt.UTC) if when.tzinfo is None else when.astimezone(dt.UTC)


def between(what: str, stored: dict, lo: dict, hi: dict) -> list[str]:
    """Each cell's counters against their bounds: the problems found (at most 10)."""
    problems = []
    for key in sorted(set(stored) | set(lo) | set(hi), key=repr):
        got, low, high = stored.get(key, Counter()), lo.get(key, Counter()), hi.get(key, Counter())
        for path in sorted(set(got) | set(low) | set(high)):
            if not low[path] <= got[path] <= high[path]:
                verdict = "lost" if got[path] < low[path] else "counted twice"
                problems.append(f"{what} {key} {path}: stored {got[path]}, acknowledged "
                                f"{low[path]}, taken {high[path]} ({verdict})")
                if len(problems) >= 10:
                    return problems
    return problems


def events_cells(hits: list[Hit]) -> dict[tuple, Counter]:
    """Raw events by site and instant (ms): one a hit."""
    cells: dict[tuple, Counter] = defaultdict(Counter)
    for hit in hits:
        cells[(hit.site, int(hit.ts.timestamp() * 1000))]["events"] += 1
    return cells


def rollup_cells(hits: list[Hit]) -> dict[tuple, Counter]:
    """Every rollup bucket's hits, by level, site and start (UTC; weeks from Monday):
    the site's total and each page's."""
    cells: dict[tuple, Counter] = defaultdict(Counter)
    for hit in hits:
        hour = hit.ts.replace(minute=0, second=0, microsecond=0)
        day = _day(hit.ts)
        for level, start in (("hourly", hour), ("daily", day),
                             ("weekly", day - dt.timedelta(days=day.weekday())),
                             ("monthly", day.replace(day=1)),
                             ("yearly", day.replace(month=1, day=1))):
            cell = cells[(level, hit.site, start)]
            cell["hits"] += 1
            cell[f"page {hit.page}"] += 1
    return cells


def stored_rollups(db) -> dict[tuple, Counter]:
    cells: dict[tuple, Counter] = defaultdict(Counter)
    for level, coll in schema.ROLLUPS.items():
        for doc in db[coll].find({}):
            cell = cells[(level, doc["site"], _utc(doc["start"]))]
            cell["hits"] += doc.get("hits", 0)
            for row in documents.rows(doc):
                cell[f"page {row[0]}"] += row[1 + documents.HITS]
    return cells


def visit_cells(site: str, lines: list[str]) -> dict[tuple, Counter]:
    """Visits starting and pageviews made in each UTC quarter hour, by the independent
    sessionization of tests/oracle.py (30 minutes apart cut a visit)."""
    views = oracle.pageviews(lines)
    cells: dict[tuple, Counter] = defaultdict(Counter)
    for visit in oracle.visits(views):
        cells[(site, _quarter(visit["start"]))]["visits"] += 1
    for view in views:
        cells[(site, _quarter(view.time))]["pageviews"] += 1
    return cells


def _quarter(t: dt.datetime) -> dt.datetime:
    return t.replace(minute=t.minute - t.minute % 15, second=0, microsecond=0)


def stored_visits(db) -> dict[tuple, Counter]:
    cells: dict[tuple, Counter] = defaultdict(Counter)
    for doc in db[VISITS].find({}, {"site": 1, "day": 1, "q": 1}):
        day = _utc(doc["day"])
        for hour, rows in doc.get("q", {}).items():
            for quarter, visits, _, _, _, pageviews in rows:
                when = day + dt.timedelta(hours=int(hour), minutes=15 * quarter)
                cells[(doc["site"], when)]["visits"] += visits
                cells[(doc["site"], when)]["pageviews"] += pageviews
    return cells


def check(db, truth: Truth) -> list[str]:
    """Everything stored against the truth; the problems found."""
    problems = []
    for what, ledger, stored, cells in (
            ("stats", truth.stats, stored_stats, stats_cells),
            ("dims", truth.dims, lambda db: stored_dims(db, truth.values), dims_cells),
            ("events", truth.events, stored_events, events_cells),
            ("rollups", truth.rollups, stored_rollups, rollup_cells)):
        if ledger is not None:
            problems += between(what, stored(db), cells(ledger.acked),
                                cells(ledger.acked + ledger.doubt))
    if truth.visits is not None:
        want = visit_cells(*truth.visits)
        problems += between("visits", stored_visits(db), want, want)
    return problems
