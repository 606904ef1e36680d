"""Visitors counted from sketches: one figure for one set of visitors, however the
range was cut into sketches and in whatever order they are merged, and its error."""

from __future__ import annotations

import random

import pytest

from queries.dimensions import sketches


def _split(people: list[str], parts: int, lg_k: int, seed: int) -> list:
    """The people as ``parts`` sketches (hours of a day), each updated in its own order."""
    rng = random.Random(seed)
    out = [sketches.new(lg_k) for _ in range(parts)]
    for person in people:
        for _ in range(rng.randint(1, 3)):       # a person returns in other hours
            out[rng.randrange(parts)].update(person)
    return out


@pytest.mark.parametrize("lg_k, n", [(sketches.LG_K, 1_700), (sketches.LG_K, 9_000),
                                     (sketches.LG_K_VALUE, 400)])
def test_the_same_visitors_give_one_figure_whatever_the_cut_and_the_order(lg_k, n):
    """A day read from its own sketch, from its 24 hours in two orders, from 12 hours
    and the day: a union's running estimate differed between these by a visitor or
    more; now it is one figure."""
    people = [f"192.0.2.{i}\x00agent" for i in range(n)]
    day = sketches.new(lg_k)
    for person in people:
        day.update(person)
    hours = _split(people, 24, lg_k, seed=n)
    shuffled = hours[:]
    random.Random(1).shuffle(shuffled)
    reads = {sketches.count([day], lg_k), sketches.count(hours, lg_k),
             sketches.count(shuffled, lg_k), sketches.count(list(reversed(hours)), lg_k),
             sketches.count(hours[:12] + [day], lg_k)}
    assert len(reads) == 1
    (found,) = reads
    assert found.error > 0 and abs(found.n - n) <= found.error


def test_a_few_visitors_are_counted_exactly():
    """Below the size where a sketch keeps a list of its visitors, the count is exact:
    no error to show."""
    people = [f"198.51.100.{i}" for i in range(900)]
    parts = _split(people, 24, sketches.LG_K, seed=3)
    assert sketches.count(parts) == sketches.Estimate(900, 0)
    assert sketches.count([]) == sketches.Estimate(0, 0)
    assert sketches.count(_split(people[:150], 3, sketches.LG_K_VALUE, 4),
                          sketches.LG_K_VALUE) == (150, 0)
