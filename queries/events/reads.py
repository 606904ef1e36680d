"""What the rest of hitboard asks of the raw events, as small named questions.

The rollups, the breakdowns of a page or a filter, the live panels and the rollup status
read events only through these functions, so how events are stored (``buckets``) stays
in this package. Each reads the buckets overlapping its range (index ``site_end``) and
counts the events inside it from their columns.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from itertools import compress

import numpy as np

from ..stats import schema
from . import buckets, expired

# The fields a grouped read may ask for, by short name (``grouped``).
FIELDS = {"h": "host", "a": "user_agent", "r": "referrer", "q": "query", "s": "status",
          "p": "path", "c": "country"}
METHOD = {"m": "method"}      # asked for by who tells pageviews from other requests
FROM_LOG = "L"                # a key's field: whether its events came from a log file
_HOUR = dt.timedelta(hours=1)


def touched_hours(db, since: dt.datetime) -> dict[str, set[dt.datetime]]:
    """Per site, the UTC hours holding an event ingested at or after ``since``."""
    touched: dict[str, set[int]] = {}
    for bucket in db[schema.EVENTS].find({"ingested": {"$gte": since}},
                                         {"_id": 0, "site": 1, "start": 1, "end": 1}):
        first, last = (schema.epoch_ms(bucket[edge]) // buckets.HOUR_MS
                       for edge in ("start", "end"))
        touched.setdefault(bucket["site"], set()).update(range(first, last + 1))
    return {site: {schema.from_epoch_ms(h * buckets.HOUR_MS) for h in hours}
            for site, hours in touched.items()}


def hourly_totals(db, site: str, hours: Iterable[dt.datetime],
                  ) -> Iterator[tuple[dt.datetime, str, object, int, int]]:
    """``(hour, path, status, hits, bytes)`` over the site's events of ``hours``, those
    a retention has deleted included (``expired``): one read per run of consecutive
    hours."""
    return expired.hourly_totals(db, site, runs(sorted(hours)))


def grouped(db, site: str, start: dt.datetime, end: dt.datetime, fields: Sequence[str],
            page: str | None = None, sources: bool = False) -> Iterator[tuple[dict, int]]:
    """``(key, hits)`` per distinct ``fields`` (short names of ``FIELDS`` or ``METHOD``)
    among the site's events of [start, end), one ``page``'s if given: the work of a
    breakdown then grows with distinct requests, not with hits. Each bucket's events are
    counted by their columns' codes (in C, by ``Counter``), and only the distinct keys
    named. ``sources``: each key also says whether its events came from a log file
    (``FROM_LOG``)."""
    names = [{**FIELDS, **METHOD}[f] for f in fields]
    counts: Counter = Counter()
    wanted = {*names, "path", *(("stream",) if sources else ())}
    for bucket in buckets.overlapping(db, site, start, end, wanted):
        n = bucket["n"]
        from_log = sources and bucket.get("stream") is not None
        keep = _inside(bucket, start, end)
        if page is not None:
            pages, codes = buckets.coded(bucket, "path", n)
            if page not in pages:
                continue
            if codes is None:
                on_page = [path == page for path in pages]
            else:
                wanted = pages.index(page)
                on_page = [code == wanted for code in codes]
            keep = on_page if keep is None else list(map(bool.__and__, keep, on_page))
        columns = [buckets.coded(bucket, name, n) for name in names]
        # A plain column (numbers) is its own key; a coded one is named afterwards.
        rows = zip(*(values if codes is None else codes for values, codes in columns),
                   strict=True)
        named = [None if codes is None else values for values, codes in columns]
        for key, hits in Counter(rows if keep is None else compress(rows, keep)).items():
            counts[(from_log, *(k if values is None else values[k]
                                for values, k in zip(named, key, strict=True)))] += hits
    for (from_log, *key), n in counts.items():
        found = dict(zip(fields, key, strict=True))
        if sources:
            found[FROM_LOG] = from_log
        yield found, n


def columns(db, site: str, start: dt.datetime, end: dt.datetime, names: Sequence[str],
            collection: str = schema.EVENTS
            ) -> Iterator[tuple[bool, list[int], dict[str, tuple[list, Sequence[int]]]]]:
    """Per bucket of the site's events of [start, end): whether they came from a log
    file, their times (ms) and each column of ``names`` as ``(values, codes)``, event
    ``i``'s value ``values[codes[i]]`` (a plain column's codes are its positions), the
    events outside the range left out. A caller classifies each distinct value once.
    ``collection``: the hits kept apart (``events.apart``) rather than the counted ones."""
    for from_log, times, coded, _, _ in placed_columns(db, site, start, end, names,
                                                       collection):
        yield from_log, times, coded


def placed_columns(db, site: str, start: dt.datetime, end: dt.datetime, names: Sequence[str],
                   collection: str = schema.EVENTS
                   ) -> Iterator[tuple[bool, list[int], dict, str, Sequence[int]]]:
    """``columns`` with the bucket's name and each event's index in it: its place
    ``(name, index)`` sorts as the events were recorded, what orders requests of one
    second (a page and its icons). A log's buckets are named by pass and first byte
    offset (``buckets``), so one pass's lines sort as the file holds them (whichever
    worker wrote them first); the others (the beacon's journal, the load generator's
    writer) by when they were written, then their ids."""
    for bucket in buckets.overlapping(db, site, start, end, (*names, "stream", "ingested"),
                                      collection):
        n = bucket["n"]
        keep = _inside(bucket, start, end)
        times = buckets.times(bucket).tolist()
        places: Sequence[int] = range(n)
        coded = {}
        for column in names:
            values, codes = buckets.coded(bucket, column, n)
            coded[column] = (values, range(n) if codes is None else codes)
        if keep is not None:
            times, places = list(compress(times, keep)), list(compress(places, keep))
            coded = {column: (values, list(compress(codes, keep)))
                     for column, (values, codes) in coded.items()}
        from_log = bucket.get("stream") is not None
        yield from_log, times, coded, _name(bucket, from_log), places


def placed_arrays(db, site: str, start: dt.datetime, end: dt.datetime, names: Sequence[str]
                  ) -> Iterator[tuple[bool, np.ndarray, dict, str, np.ndarray]]:
    """``placed_columns`` as numpy arrays, for a caller that works on whole columns:
    times (int64 ms), each column's ``(values, codes)`` with int64 codes, the bucket's
    name and each event's index in it; the events outside the range left out by a
    mask, not event by event."""
    lo, hi = schema.epoch_ms(start), schema.epoch_ms(end)
    for bucket in buckets.overlapping(db, site, start, end, (*names, "stream", "ingested")):
        n = bucket["n"]
        times = np.asarray(buckets.times(bucket), dtype=np.int64)
        coded = {}
        for column in names:
            values, codes = buckets.coded(bucket, column, n)
            coded[column] = (values, np.arange(n, dtype=np.int64) if codes is None
                             else np.asarray(codes, dtype=np.int64))
        places = np.arange(n, dtype=np.int64)
        if not (bucket["start"] >= start and bucket["end"] < end):
            keep = (times >= lo) & (times < hi)
            times, places = times[keep], places[keep]
            coded = {column: (values, codes[keep]) for column, (values, codes) in coded.items()}
        from_log = bucket.get("stream") is not None
        yield from_log, times, coded, _name(bucket, from_log), places


def _name(bucket: dict, from_log: bool) -> str:
    """What sorts a bucket among others as its events were recorded (``placed_columns``)."""
    if from_log:
        return str(bucket["_id"])
    written = bucket.get("ingested")
    return f"{0 if written is None else schema.epoch_ms(written):015d}/{bucket['_id']}"


def span(db, site: str) -> tuple[dt.datetime, dt.datetime] | None:
    """Bounds of the site's events still kept, from the index by end (``site_end``):
    no event is before the first, none after the second (None: none is kept)."""
    coll = db[schema.EVENTS]
    first = coll.find_one({"site": site}, {"end": 1}, sort=[("end", 1)])
    last = coll.find_one({"site": site}, {"end": 1}, sort=[("end", -1)])
    if first is None or last is None:
        return None
    return first["end"] - _HOUR, last["end"]


def count(db, site: str, start: dt.datetime, end: dt.datetime,
          limit: int | None = None) -> int:
    """The site's events of [start, end); once past ``limit`` (if given), a number
    above it, without reading further."""
    total = 0
    for bucket in buckets.overlapping(db, site, start, end, ()):
        keep = _inside(bucket, start, end)
        total += bucket["n"] if keep is None else sum(keep)
        if limit is not None and total > limit:
            break
    return total


def waiting(db, since: dt.datetime | None) -> int:
    """Events ingested at or after ``since`` (all of them when None): what the next
    rollup run reads."""
    return buckets.events_in(db, {"ingested": {"$gte": since}} if since else {})


def newest_clients(db, site: str, start: dt.datetime, end: dt.datetime,
                   limit: int) -> Iterator[tuple[str | None, str | None]]:
    """``(address, agent)`` of the site's events of [start, end], newest first, at most
    ``limit``. The rows are sorted and cut when they first reach ``limit``, then each
    time they double, not after every bucket: the Live page reads 10,001 of them from
    a bucket a second, and sorting them all again after each took it 0.3-1 s."""
    lo, hi = schema.epoch_ms(start), schema.epoch_ms(end)
    found: list[tuple[int, str | None, str | None]] = []
    floor = None        # the limit-th newest time at the last cut: the true one is no older
    for bucket in buckets.newest(db, {"site": site, "end": {"$gte": start},
                                      "start": {"$lte": end}}, ("host", "user_agent")):
        if floor is not None and schema.epoch_ms(bucket["end"]) < floor:
            break                       # buckets come by end, newest first: none is newer
        n = bucket["n"]
        found.extend((t, host, agent) for t, host, agent in zip(
            buckets.times(bucket), buckets.column(bucket, "host", n),
            buckets.column(bucket, "user_agent", n), strict=True) if lo <= t <= hi)
        if len(found) >= (limit if floor is None else 2 * limit):
            floor = _cut(found, limit)
    _cut(found, limit)
    for _, host, agent in found:
        yield host, agent


def _cut(rows: list[tuple], limit: int) -> int | None:
    """Keep the ``limit`` newest rows, newest first; the time of the last kept."""
    rows.sort(key=lambda row: -row[0])
    del rows[limit:]
    return rows[-1][0] if rows else None


def _inside(bucket: dict, start: dt.datetime, end: dt.datetime) -> list[bool] | None:
    """Which of the bucket's events lie in [start, end): None when all of them do."""
    if bucket["start"] >= start and bucket["end"] < end:
        return None
    lo, hi = schema.epoch_ms(start), schema.epoch_ms(end)
    return [lo <= t < hi for t in buckets.times(bucket)]


def runs(hours: list[dt.datetime]) -> list[tuple[dt.datetime, dt.datetime]]:
    """Sorted hours → ``[start, end)`` ranges of consecutive hours."""
    out: list[list[dt.datetime]] = []
    for hour in hours:
        if out and out[-1][1] == hour:
            out[-1][1] = hour + _HOUR
        else:
            out.append([hour, hour + _HOUR])
    return [(lo, hi) for lo, hi in out]
