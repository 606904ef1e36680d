"""Visits cut on columns (``queries.visits.frames``) equal the pageview-at-a-time cut
(``sessions``, ``cells``) they replace for a log's hours: the same tallies, the same
pageview cells, sketches byte for byte."""

from __future__ import annotations

import random

import numpy as np

from queries.dimensions import sketches
from queries.visits import cells, frames
from queries.visits.sessions import MINUTE_MS, Pageview, sessionize, tally

TIMEOUT = 30 * MINUTE_MS


def _columns(views: list[Pageview]) -> frames.Pageviews:
    """``views`` as ``pageview_frame`` gives them (ids by first appearance)."""
    visitors = list(dict.fromkeys(v.visitor for v in views))
    pages = list(dict.fromkeys(v.page for v in views))
    buckets = sorted({v.place[0] for v in views})
    column = {"visitor": [visitors.index(v.visitor) for v in views],
              "time": [v.time for v in views], "page": [pages.index(v.page) for v in views],
              "rank": [buckets.index(v.place[0]) for v in views],
              "place": [v.place[1] for v in views]}
    return frames.Pageviews({k: np.array(c, dtype=np.int64) for k, c in column.items()},
                            visitors, pages)


def _views(seed: int) -> list[Pageview]:
    """Pageviews of a few visitors over six hours, many in one second (a page and what
    it asks for), gaps around the timeout, in buckets read out of name order."""
    rnd = random.Random(seed)
    out = []
    for i in range(400):
        second = rnd.choice([rnd.randrange(0, 6 * 60), rnd.randrange(0, 6 * 60) * 60])
        bucket = f"b{rnd.randrange(5)}"
        out.append(Pageview(f"10.0.0.{rnd.randrange(12)}\x00agent{rnd.randrange(2)}",
                            second * 1000, f"/p{rnd.randrange(9)}", place=(bucket, i)))
    return out


def _dumped(found: dict) -> dict:
    return {key: (cell.events, sketches.dump(cell.sketch)) for key, cell in found.items()}


def test_the_columns_cut_the_same_visits_tallies_and_cells_as_a_pageview_at_a_time():
    for seed in range(6):
        views = _views(seed)
        first, last = 60 * MINUTE_MS, 5 * 60 * MINUTE_MS      # a span inside its window
        columns = _columns(views)
        quarters, pages, counted = frames.tallied(frames.visits_of(columns, TIMEOUT),
                                                  columns, first, last)
        inside = [v for v in views if first <= v.time < last]
        expected = tally([v for v in sessionize(views, TIMEOUT) if first <= v.start < last],
                         inside)
        assert (quarters, pages) == expected
        assert _dumped(counted) == _dumped(cells.tally(inside))


def test_requests_of_one_second_keep_their_recorded_order_across_buckets():
    views = [Pageview("v", 0, "/icon.png.html", place=("b1", 0)),
             Pageview("v", 0, "/", place=("b0", 7)),
             Pageview("v", 0, "/next", place=("b0", 9))]
    visits = frames.visits_of(_columns(views), TIMEOUT)
    pages = _columns(views).pages
    assert [pages[visits[kind][0]] for kind in ("entry", "exit")] == ["/", "/icon.png.html"]


def test_an_empty_window_has_no_visits():
    empty = frames.Pageviews({k: np.zeros(0, dtype=np.int64) for k in frames.FIELDS}, [], [])
    assert frames.tallied(frames.visits_of(empty, TIMEOUT), empty, 0, 10) == ({}, {
        "views": {}, "entry": {}, "exit": {}}, {})
