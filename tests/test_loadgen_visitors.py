"""Synthetic visits, drawn with numpy a batch of cells at a time: seeded, and cut as
people browse: visits of a few views that run on from page to page and call to call."""

from __future__ import annotations

from queries.loadgen.visitors import (
    BOT_SHARE,
    MAX_VISITS,
    VIEWS_PER_VISIT,
    SyntheticVisitors,
)

CELLS = [0, 1, 2, 3, 4, 5, 7, 100, 12_345]
OWN = "https://s.example/"


def _runs_on(visits) -> list[bool]:
    """For each visit after the first: is it the previous one going on (same client)?"""
    return [a.host == b.host and a.agent == b.agent
            for a, b in zip(visits, visits[1:], strict=False)]


def test_same_seed_same_visits_other_seed_differs():
    a, b, c = (SyntheticVisitors(seed) for seed in (4, 4, 5))
    assert a.draw_many("s.example", CELLS) == b.draw_many("s.example", CELLS)
    assert a.draw("s.example", 50) == b.draw("s.example", 50)
    assert a.draw_many("s.example", CELLS) != c.draw_many("s.example", CELLS)


def test_each_cells_hits_are_shared_by_its_visits():
    drawn = SyntheticVisitors(1).draw_many("s.example", CELLS)
    assert [sum(v.share for v in visits) for visits in drawn] == CELLS
    assert all(v.share >= 1 for visits in drawn for v in visits)
    big = drawn[-1]
    assert abs(len(big) - CELLS[-1] / VIEWS_PER_VISIT) < 0.1 * CELLS[-1] / VIEWS_PER_VISIT


def test_a_visit_runs_on_to_the_next_cells_and_calls_from_the_site_itself():
    """Cells of one hit each, in one call and one call each: a visit of k views is k
    cells in a row, so ~1 - 1/VIEWS_PER_VISIT of them go on from the one before; those
    come from the site itself (bots: no referrer), without the landing's campaign (but
    for the few new visits of whoever made the one before: the busiest people and bots
    come back often)."""
    visitors = SyntheticVisitors(3)
    for visits in ([v for cell in visitors.draw_many("s.example", [1] * 20_000) for v in cell],
                   [visitors.draw("s.example", 1)[0] for _ in range(20_000)]):
        runs_on = _runs_on(visits)
        assert abs(sum(runs_on) / len(runs_on) - (1 - 1 / VIEWS_PER_VISIT)) < 0.03
        later = [b for b, going_on in zip(visits[1:], runs_on, strict=True) if going_on]
        inside = [v.referrer in (OWN, "-") and v.query == "" for v in later]
        assert sum(inside) / len(inside) > 0.97
        landings = [b for b, going_on in zip(visits[1:], runs_on, strict=True) if not going_on]
        assert {v.referrer for v in landings} - {OWN, "-"}         # arrivals from elsewhere
        assert any(v.query for v in landings)


def test_a_huge_cell_is_at_most_max_visits_longer_ones():
    visits = SyntheticVisitors(4).draw("s.example", 50_000_000)
    assert len(visits) == MAX_VISITS
    assert sum(v.share for v in visits) == 50_000_000


def test_visits_mix_people_and_bots_and_name_the_site_as_referrer():
    visitors = SyntheticVisitors(2)
    visits = [v for cell in visitors.draw_many("s.example", [4] * 20_000) for v in cell]
    landings = [b for b, going_on in zip(visits[1:], _runs_on(visits), strict=True)
                if not going_on]
    bots = [v for v in landings if not v.host.startswith("2001:db8::")]
    assert abs(len(bots) / len(landings) - BOT_SHARE) < 0.02
    assert all(v.referrer == "-" and v.country == "US" for v in bots)
    people = {v.host for v in landings} - {v.host for v in bots}
    assert 1_000 < len(people) < len(landings) - len(bots)       # some come back
    assert OWN in {v.referrer for v in landings}
    assert {v.status for v in visits} == {200, 304, 404, 500}
