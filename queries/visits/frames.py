"""Visits cut on columns: a window's pageviews as arrays of numbers (``pageview_frame``:
Python per bucket and per distinct value, never per event), sessionized by one sort
(``visits_of``) and tallied per quarter and page by grouped sums (``tallied``), as
``sessions.sessionize`` and ``sessions.tally`` do a pageview at a time. ``build`` cuts a
log's hours so; a site with custom events or engagements goes through ``sessions``, whose
rules for them (an engagement applies to its visit's last page) are per event.

numpy, not Polars: a window is a day's pageviews (~2,000 in the benches' logs), where
each Polars operation cost 0.1-0.3 ms whatever its size on a loaded machine (its
thread pool's dispatch), numpy's 10-50 µs; the Polars version of this module cost the
rollup phase more CPU than the pageview-at-a-time one it replaced.
Visitors and pages are ids into the window's ``visitors`` and ``pages`` lists. The
arrays are in the order the events were read: what feeds the pageviews' sketches
(``tallied``) in the order ``cells.tally`` feeds them, so they keep their bytes.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..dimensions import sketches
from ..dimensions.assets import page_of
from ..dimensions.classify import is_bot_agent
from ..events import reads as event_reads
from ..stats import schema
from . import cells
from .sessions import QUARTER_MS

COLUMNS = ("host", "user_agent", "path", "method", "status")
FIELDS = ("visitor", "time", "page", "rank", "place")


class Pageviews(NamedTuple):
    """A window's pageviews: ``frame``, int64 columns of ``FIELDS`` (``rank`` and
    ``place``: its bucket's rank among the window's and its index there, which order the
    requests of one second as recorded), in read order; the visitors' strings (as the
    sketches hash them) and pages' by id."""

    frame: dict[str, np.ndarray]
    visitors: list[str]
    pages: list[str]


def pageview_frame(db, site: str, lo: int, hi: int, unknown_bots: bool,
                   known: dict) -> Pageviews:
    """The site's pageviews among its events of [lo, hi) (ms), as ``build.pageviews``
    chooses them. ``known``: paths already classified, shared by a recompute's calls."""
    visitor_ids: dict[str, int] = {}
    page_ids: dict[str, int] = {}
    names: list[str] = []
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ("time", "visitor", "page",
                                                           "bucket", "place")}
    for from_log, times, columns, name, places in event_reads.placed_arrays(
            db, site, schema.from_epoch_ms(lo), schema.from_epoch_ms(hi), COLUMNS):
        hosts, host_codes = columns["host"]
        agents, agent_codes = columns["user_agent"]
        paths, path_codes = columns["path"]
        pages = [known[p] if p in known else page_of(p, known) for p in paths]
        wanted = (np.array([page is not None for page in pages], dtype=bool)[path_codes]
                  & np.array([not is_bot_agent(a, unknown_bots) for a in agents],
                             dtype=bool)[agent_codes])
        if from_log:
            wanted &= _answered(columns)
        chosen = np.flatnonzero(wanted)
        if not len(chosen):
            continue
        pairs, pair_of = np.unique(host_codes[chosen] * 65_536 + agent_codes[chosen],
                                   return_inverse=True)
        ids = [visitor_ids.setdefault(f"{hosts[h] or ''}\x00{agents[a] or ''}",
                                      len(visitor_ids))
               for h, a in zip((pairs // 65_536).tolist(), (pairs % 65_536).tolist(),
                               strict=True)]
        page_of_code = np.array([-1 if page is None else page_ids.setdefault(page, len(page_ids))
                                 for page in pages], dtype=np.int64)
        parts["time"].append(times[chosen])
        parts["place"].append(places[chosen])
        parts["bucket"].append(np.full(len(chosen), len(names), dtype=np.int64))
        parts["visitor"].append(np.array(ids, dtype=np.int64)[pair_of.reshape(-1)])
        parts["page"].append(page_of_code[path_codes[chosen]])
        names.append(name)
    if not names:
        return Pageviews({name: np.zeros(0, dtype=np.int64) for name in FIELDS}, [], [])
    joined = {key: np.concatenate(arrays) for key, arrays in parts.items()}
    ranks = np.empty(len(names), dtype=np.int64)
    ranks[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
    joined["rank"] = ranks[joined.pop("bucket")]
    return Pageviews(joined, list(visitor_ids), list(page_ids))


def _answered(columns: dict) -> np.ndarray:
    """Per event of a log, whether it is a GET answered 2xx or 304."""
    methods, method_codes = columns["method"]
    statuses, status_codes = columns["status"]
    gets = np.array([m == "GET" for m in methods], dtype=bool)
    good = np.array([s is not None and (200 <= s < 300 or s == 304) for s in statuses],
                    dtype=bool)
    return gets[method_codes] & good[status_codes]


def visits_of(views: Pageviews, timeout_ms: int) -> dict[str, np.ndarray]:
    """The visits of a window's pageviews, as columns ``start``, ``last`` (ms), ``entry``,
    ``exit`` (page ids), ``views``: a visitor's pageviews in time order (then as
    recorded), a new visit after each gap over ``timeout_ms``, as
    ``sessions.sessionize``."""
    frame = views.frame
    order = np.lexsort((frame["place"], frame["rank"], frame["time"], frame["visitor"]))
    visitor, time, page = (frame[name][order] for name in ("visitor", "time", "page"))
    n = len(order)
    breaks = np.ones(n, dtype=bool)
    breaks[1:] = (visitor[1:] != visitor[:-1]) | (np.diff(time) > timeout_ms)
    firsts = np.flatnonzero(breaks)
    lasts = np.append(firsts[1:] - 1, n - 1) if n else firsts
    return {"start": time[firsts], "last": time[lasts], "entry": page[firsts],
            "exit": page[lasts], "views": np.diff(np.append(firsts, n))}


def tallied(visits: dict[str, np.ndarray], views: Pageviews, first: int, last: int
            ) -> tuple[dict[int, list[int]], dict[str, dict], dict[tuple, cells.Cell]]:
    """``sessions.tally`` of the visits starting in [first, last) and of the pageviews
    made there (the same dicts, built per group), and their pageviews' cells
    (``cells.tally``'s)."""
    kept = (visits["start"] >= first) & (visits["start"] < last)
    start = visits["start"][kept]
    q = start - start % QUARTER_MS
    sums = ((visits["views"][kept] == 1).astype(np.int64), visits["last"][kept] - start)
    page = views.pages
    n_pages = len(page) + 1
    quarters = {key: [n, bounces, duration, n_views, 0] for key, n, bounces, duration,
                n_views in _grouped(q, *sums, visits["views"][kept])}
    pages: dict[str, dict] = {"views": {}}
    for kind in ("entry", "exit"):
        pages[kind] = {}
        for key, n, bounces, duration in _grouped(q // QUARTER_MS * n_pages
                                                  + visits[kind][kept], *sums):
            quarter, p = divmod(key, n_pages)
            pages[kind][(quarter * QUARTER_MS, page[p])] = [n, bounces, duration]
    frame = views.frame
    time = frame["time"]
    inside = np.flatnonzero((time >= first) & (time < last))
    keys = time[inside] // QUARTER_MS * n_pages + frame["page"][inside]
    counted: dict[tuple, cells.Cell] = {}
    for key, n in _grouped(keys):
        quarter, p = divmod(int(key), n_pages)
        quarter *= QUARTER_MS
        pages["views"][(quarter, page[p])] = [n]
        row = quarters.get(quarter)
        if row is None:
            row = quarters[quarter] = [0, 0, 0, 0, 0]
        row[4] += n
        counted[(quarter, cells.PAGEVIEW, cells.PAGE, page[p])] = cells.Cell(n)
    # Each visitor once per cell, in the order of its first pageview there: a visitor
    # seen again changes no sketch, so the bytes are those of feeding every pageview.
    cell_of = np.unique(keys, return_inverse=True)[1].reshape(-1)
    visitors = frame["visitor"][inside]
    firsts = np.unique(cell_of * (len(views.visitors) + 1) + visitors, return_index=True)[1]
    firsts.sort()
    for key, visitor in zip(keys[firsts].tolist(), visitors[firsts].tolist(), strict=True):
        quarter, p = divmod(key, n_pages)
        cell = counted[(quarter * QUARTER_MS, cells.PAGEVIEW, cells.PAGE, page[p])]
        if cell.sketch is None:
            cell.sketch = sketches.new(cells.LG_K)
        cell.sketch.update(views.visitors[visitor])
    return quarters, pages, counted


def _grouped(keys: np.ndarray, *values: np.ndarray):
    """Per distinct key (in order): the key, its rows and each of ``values`` summed."""
    unique, inverse = np.unique(keys, return_inverse=True)
    inverse = inverse.reshape(-1)
    columns = [np.bincount(inverse, minlength=len(unique)).tolist()]
    for value in values:
        summed = np.zeros(len(unique), dtype=np.int64)
        np.add.at(summed, inverse, value)
        columns.append(summed.tolist())
    return zip(unique.tolist(), *columns, strict=True)
