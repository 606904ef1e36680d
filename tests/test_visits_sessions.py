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


def _event(visitor: str, time: int, page: str, name: str = "Signup") -> Pageview:
    return Pageview(visitor, time, page, views=0, event=(name, (), None))


def _engaged(visitor: str, time: int, page: str, ms: int) -> Pageview:
    return Pageview(visitor, time, page, views=0, engaged=ms)


def test_a_custom_event_un_bounces_and_lasts_the_visit_but_is_no_pageview():
    (visit,) = sessionize([Pageview("a", 0, "/"), _event("a", 5 * MIN, "/")], TIMEOUT)
    assert (visit.views, visit.events, visit.bounce, visit.duration) == (1, 1, False, 5 * MIN)
    quarters, pages = tally([visit], [Pageview("a", 0, "/"), _event("a", 5 * MIN, "/")])
    assert quarters == {0: [1, 0, 5 * MIN, 1, 1]}          # one pageview, not two


def test_an_engagement_lasts_the_last_page_without_un_bouncing_it():
    views = [Pageview("a", 0, "/post"), _engaged("a", 4 * MIN, "/post", 3 * MIN)]
    (visit,) = sessionize(views, TIMEOUT)
    assert (visit.bounce, visit.duration, visit.last) == (True, 3 * MIN, 0)


def test_an_engagement_counts_only_for_the_last_page_within_the_timeout_and_elapsed_time():
    for views, expected in [
        ([Pageview("a", 0, "/a"), _engaged("a", MIN, "/b", MIN)], 0),       # another page
        ([Pageview("a", 0, "/a"), _engaged("a", TIMEOUT + 1, "/a", MIN)], 0),  # too late
        ([Pageview("a", 0, "/a"), _engaged("a", MIN, "/a", 10 * MIN)], MIN),   # elapsed
        ([Pageview("a", 0, "/a"), _engaged("a", MIN, "/a", MIN),            # a later page
          Pageview("a", 2 * MIN, "/b")], 2 * MIN),
    ]:
        (visit,) = sessionize(views, TIMEOUT)
        assert visit.duration == expected, views


def test_pageviews_of_one_instant_keep_the_order_they_were_recorded_in():
    views = [Pageview("a", 5, "/z", place=("b1", 0)), Pageview("a", 5, "/a", place=("b1", 1)),
             Pageview("a", 5, "/m", place=("b2", 0)), _event("a", 5, "/m")]
    for seed in range(3):
        random.Random(seed).shuffle(views)
        (visit,) = sessionize(views, TIMEOUT)
        assert (visit.entry, visit.exit, visit.views, visit.events) == ("/z", "/m", 3, 1)
