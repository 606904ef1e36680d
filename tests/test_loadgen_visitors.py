"""Synthetic visits, drawn with numpy a batch of cells at a time: seeded, and shaped as
the dimension counters expect (a few visits a cell sharing its hits)."""

from __future__ import annotations

from dashboard.loadgen.visitors import BOT_SHARE, DRAWS_PER_CELL, SyntheticVisitors

CELLS = [0, 1, 2, 3, 4, 5, 7, 100, 12_345]


def test_same_seed_same_visits_other_seed_differs():
    a, b, c = (SyntheticVisitors(None, seed) for seed in (4, 4, 5))
    assert a.draw_many("s.example", CELLS) == b.draw_many("s.example", CELLS)
    assert a.draw("s.example", 50) == b.draw("s.example", 50)
    assert a.draw_many("s.example", CELLS) != c.draw_many("s.example", CELLS)


def test_each_cell_is_a_few_visits_sharing_its_hits_evenly():
    drawn = SyntheticVisitors(None, 1).draw_many("s.example", CELLS)
    assert len(drawn) == len(CELLS)
    for n, visits in zip(CELLS, drawn, strict=True):
        assert len(visits) == min(n, DRAWS_PER_CELL)
        shares = [v.share for v in visits]
        assert sum(shares) == n
        assert not shares or max(shares) - min(shares) <= 1


def test_visits_mix_people_and_bots_and_name_the_site_as_referrer():
    visitors = SyntheticVisitors(None, 2)
    visits = [v for cell in visitors.draw_many("s.example", [4] * 5_000) for v in cell]
    bots = [v for v in visits if not v.host.startswith("2001:db8::")]
    assert abs(len(bots) / len(visits) - BOT_SHARE) < 0.02
    assert all(v.referrer == "-" and v.country == "US" for v in bots)
    people = {v.host for v in visits} - {v.host for v in bots}
    assert 1_000 < len(people) < len(visits) - len(bots)       # some come back
    assert "https://s.example/" in {v.referrer for v in visits}
    assert {v.status for v in visits} == {200, 304, 404, 500}
