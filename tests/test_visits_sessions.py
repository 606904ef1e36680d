"""Pageviews cut into visits and summed per quarter hour (``queries.visits.sessions``):
the definitions README gives, at their edges."""

from __future__ import annotations

import random

from queries.visits.sessions import QUARTER_MS, Pageview, Visit, sessionize, tally

MIN = 60_000
TIMEOUT = 30 * MIN


def test_a_gap_of_exactly_the_timeout_continues_the_visit_one_ms_more_ends_it():
    views = [Pageview("a", 0, "/"), Pageview("a", TIMEOUT, "/x"),
             Pageview("a", 2 * TIMEOUT + 1, "/y")]
    assert sessionize(views, TIMEOUT) == [Visit(0, TIMEOUT, "/", "/x", 2),
                                         Visit(2 * TIMEOUT + 1, 2 * TIMEOUT + 1, "/y", "/y", 1)]


def test_visitors_are_apart_and_the_order_of_the_input_does_not_matter():
    views = [Pageview(v, t * MIN, f"/{t}") for v in "abc" for t in (0, 10, 50, 55, 200)]
    expected = sessionize(views, TIMEOUT)
    for seed in range(5):
        random.Random(seed).shuffle(views)
        assert sessionize(views, TIMEOUT) == expected
    assert len(expected) == 9                      # per visitor: 0-10, 50-55, 200
    assert {v.views for v in expected} == {2, 1}


def test_a_visit_counts_in_the_quarter_of_its_first_pageview_its_pageviews_in_their_own():
    views = [Pageview("a", 14 * MIN, "/in"), Pageview("a", 16 * MIN, "/mid"),
             Pageview("a", 40 * MIN, "/out"), Pageview("b", 20 * MIN, "/in")]
    quarters, pages = tally(sessionize(views, TIMEOUT), views)
    # visits, bounces, duration (ms), views of those visits, pageviews made in the quarter
    assert quarters == {0: [1, 0, 26 * MIN, 3, 1],
                        QUARTER_MS: [1, 1, 0, 1, 2],
                        2 * QUARTER_MS: [0, 0, 0, 0, 1]}
    assert pages["entry"] == {(0, "/in"): [1, 0, 26 * MIN], (QUARTER_MS, "/in"): [1, 1, 0]}
    assert pages["exit"] == {(0, "/out"): [1, 0, 26 * MIN], (QUARTER_MS, "/in"): [1, 1, 0]}
    assert pages["views"][(QUARTER_MS, "/mid")] == [1]


def test_one_pageview_is_a_bounce_of_no_duration_two_at_one_instant_are_not():
    one, two = sessionize([Pageview("a", 5, "/")], TIMEOUT), \
        sessionize([Pageview("b", 5, "/a"), Pageview("b", 5, "/b")], TIMEOUT)
    assert one[0].bounce and one[0].duration == 0
    assert not two[0].bounce and two[0] == Visit(5, 5, "/a", "/b", 2)
