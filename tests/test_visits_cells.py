"""Cells summed from stored rows: one union per cell gives the bytes that uniting the
rows two by two (``Cell.merge``, what a sum did row by row) gives."""

from __future__ import annotations

import random

from queries.dimensions import sketches
from queries.visits import cells


def _row(rng: random.Random, key: tuple) -> list:
    sketch = None
    if rng.random() < 0.9:
        sketch = sketches.new(cells.LG_K)
        for _ in range(rng.choice([1, 3, 40, 400, 3000])):
            sketch.update(f"v{rng.randint(0, 9000)}")
    revenue = rng.choice([{}, {"EUR": "12.50"}, {"USD": "1E+2", "EUR": "0.1"}])
    cell = cells.Cell(rng.randint(1, 9), revenue, sketch)
    return cells.to_row(key, cell)


def _two_by_two(rows: list[list]) -> dict[tuple, cells.Cell]:
    found: dict[tuple, cells.Cell] = {}
    for row in rows:
        key, cell = cells.from_row(row)
        cells.merge_into(found, key[len(key) - 3:], cell)
    return cells.capped(found)


def test_a_cell_s_rows_summed_at_once_are_the_rows_summed_two_by_two():
    rng = random.Random(7)
    keys = [("signup", "", ""), ("signup", "page", "/a"), ("", "page", "/b")]
    rows = [_row(rng, (rng.randint(0, 3), *rng.choice(keys))) for _ in range(200)]
    got = {key: cells.to_row(key, cell) for key, cell in cells.summed(rows).items()}
    want = {key: cells.to_row(key, cell) for key, cell in _two_by_two(rows).items()}
    assert list(got) == list(want)
    assert got == want
