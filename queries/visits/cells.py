"""Custom events counted per quarter hour, in the visits' pass: pure, no database.

A cell is one (name, dimension, value): the event as a whole (``TOTAL``: dimension and
value empty), the event on one page (``PAGE``, the page), one property's value
(``"p:" + key``, the value). Each holds the events, their visitors (a sketch: no
identifier is kept) and their revenue per currency (``Decimal``, never converted). Rows
as stored: ``[quarter, name, dim, value, events, {currency: amount}, sketch]`` for an
hour (quarter 0-3), the same without ``quarter`` for a day's or a month's sums.

Pageviews are cells too, of the name ``PAGEVIEW`` (empty: no custom event has that
name) on each page: what a page goal counts, so that its conversions and visitors are
those of the same pageviews (the visits' own: ``build.pageviews``) over the same
quarters as an event goal's.

Caps, so that a stranger's browser cannot fill the store: a part (an hour, a day, a
month) keeps the ``MAX_NAMES`` names with the most events (and the pageviews) and
``MAX_VALUES`` values per name and dimension; the rest are summed under ``(other)``.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from ..dimensions import sketches
from .sessions import QUARTER_MS, Pageview

TOTAL, PAGE, PROP = "", "page", "p:"
PAGEVIEW = ""           # the name of the pageviews' cells
OTHER = "(other)"
MAX_NAMES = 1_000
MAX_VALUES = 10_000
LG_K = sketches.LG_K_VALUE


class Cell:
    """What one cell adds up to: events, visitors' sketch, revenue per currency."""

    __slots__ = ("events", "revenue", "sketch")

    def __init__(self, events: int = 0, revenue: dict | None = None, sketch=None):
        self.events = events
        self.revenue: dict[str, Decimal] = dict(revenue or {})
        self.sketch = sketch

    def add(self, visitor: str, revenue=None, events: int = 1) -> None:
        self.events += events
        if self.sketch is None:
            self.sketch = sketches.new(LG_K)
        self.sketch.update(visitor)
        if revenue:
            currency, amount = revenue
            self.revenue[currency] = self.revenue.get(currency, Decimal(0)) + Decimal(amount)

    def merge(self, other: Cell) -> None:
        self.events += other.events
        for currency, amount in other.revenue.items():
            self.revenue[currency] = self.revenue.get(currency, Decimal(0)) + amount
        if other.sketch is not None:
            self.sketch = (other.sketch if self.sketch is None
                           else sketches.union((self.sketch, other.sketch), LG_K))

    @property
    def visitors(self) -> int:
        return 0 if self.sketch is None else int(round(self.sketch.get_estimate()))


def prop_dim(key: str) -> str:
    return PROP + key


def tally(views: Iterable[Pageview]) -> dict[tuple, Cell]:
    """Per ``(quarter start ms, name, dim, value)``, the cells of ``views``: custom events
    (pageviews carrying one: see ``sessions.Pageview``) per name, page and property;
    pageviews per page; engagements none."""
    cells: dict[tuple, Cell] = {}
    for view in views:
        q = view.time - view.time % QUARTER_MS
        if view.event:
            name, props, revenue = view.event
            keys = [(q, name, TOTAL, ""), (q, name, PAGE, view.page)]
            keys += [(q, name, prop_dim(key), value) for key, value in props]
            n = 1
        elif view.views:
            keys, revenue, n = [(q, PAGEVIEW, PAGE, view.page)], None, view.views
        else:
            continue
        for key in keys:
            cell = cells.get(key)
            if cell is None:
                cell = cells[key] = Cell()
            cell.add(view.visitor, revenue, n)
    return cells


def backfilled_pageviews(views: Iterable[tuple[int, str, int]], runs: Iterable[Pageview]
                         ) -> dict[tuple, Cell]:
    """The pageview cells of history written without events (see ``build.backfilled``):
    ``views`` give each quarter's pageviews of a page, ``runs`` their visitors, each in
    every quarter of its run where its page has pageviews (a run's views are not kept
    per quarter)."""
    cells: dict[tuple, Cell] = {}
    for q, page, n in views:
        key = (q, PAGEVIEW, PAGE, page)
        cell = cells.get(key)
        if cell is None:
            cell = cells[key] = Cell()
        cell.events += n
    for run in runs:
        first = run.time - run.time % QUARTER_MS
        last = run.time if run.until is None else run.until
        for q in range(first, last - last % QUARTER_MS + 1, QUARTER_MS):
            cell = cells.get((q, PAGEVIEW, PAGE, run.page))
            if cell is not None:
                cell.add(run.visitor, events=0)
    return cells


def capped(cells: dict[tuple, Cell], pages: int | None = None) -> dict[tuple, Cell]:
    """``cells`` (keys ending ``name, dim, value``) within the caps: the names with the
    most events, then the values with the most per name and dimension (``pages`` of the
    pageviews', if given: an hour keeps the pages its views rows keep); the rest merged
    under ``OTHER`` (a capped name's values all go with it)."""
    per_name: dict[str, int] = {}
    for key, cell in cells.items():
        if key[-2] == TOTAL:
            per_name[key[-3]] = per_name.get(key[-3], 0) + cell.events
    if len(per_name) <= MAX_NAMES and _values_fit(cells, pages):
        return {key: Cell(cell.events, cell.revenue, cell.sketch)
                for key, cell in cells.items()}     # what the merges below would give
    kept_names = _top(per_name, MAX_NAMES) | {PAGEVIEW}
    named: dict[tuple, Cell] = {}
    for key, cell in cells.items():
        if key[-3] not in kept_names:
            key = (*key[:-3], OTHER, *key[-2:])
        merge_into(named, key, cell)
    per_value: dict[tuple, dict[str, int]] = {}
    for key, cell in named.items():
        if key[-2] != TOTAL:
            counts = per_value.setdefault(key[-3:-1], {})
            counts[key[-1]] = counts.get(key[-1], 0) + cell.events
    kept_values = {group: _top(counts, pages if pages and group == (PAGEVIEW, PAGE)
                               else MAX_VALUES)
                   for group, counts in per_value.items()}
    out: dict[tuple, Cell] = {}
    for key, cell in named.items():
        if key[-2] != TOTAL and key[-1] not in kept_values[key[-3:-1]]:
            key = (*key[:-1], OTHER)
        merge_into(out, key, cell)
    return out


def _values_fit(cells: dict[tuple, Cell], pages: int | None) -> bool:
    """Whether every name and dimension has no more values than its cap (``capped``)."""
    values: dict[tuple, int] = {}
    for key in cells:
        if key[-2] != TOTAL:
            group = key[-3:-1]
            values[group] = values.get(group, 0) + 1
    return all(n <= (pages if pages and group == (PAGEVIEW, PAGE) else MAX_VALUES)
               for group, n in values.items())


def _top(counts: dict[str, int], n: int) -> set[str]:
    if len(counts) <= n:
        return set(counts)
    return set(sorted(counts, key=lambda k: (-counts[k], k))[:n])


def merge_into(cells: dict[tuple, Cell], key: tuple, cell: Cell) -> None:
    """Add ``cell`` to ``cells[key]`` (a copy of it when there is none yet)."""
    found = cells.get(key)
    if found is None:
        cells[key] = Cell(cell.events, cell.revenue, cell.sketch)
    else:
        found.merge(cell)


def to_row(key: tuple, cell: Cell) -> list:
    """A cell as stored (``key``: its quarter within the hour, or none, then name, dim,
    value)."""
    revenue = {currency: str(amount) for currency, amount in sorted(cell.revenue.items())}
    return [*key, cell.events, revenue,
            sketches.dump(cell.sketch) if cell.sketch is not None else None]


def from_row(row: list) -> tuple[tuple, Cell]:
    *key, events, revenue, sketch = row
    return tuple(key), Cell(events, {c: Decimal(a) for c, a in (revenue or {}).items()},
                            sketches.load(sketch) if sketch is not None else None)


def summed(rows: Iterable[list], keep: int = 0) -> dict[tuple, Cell]:
    """Stored rows merged by their key's last ``3 + keep`` fields (``keep`` 1: by
    quarter too), within the caps. A key's sketches are united once, all together, in
    the rows' order: the same bytes as uniting them two by two (``Cell.merge``), for
    one union rather than one per row."""
    grouped: dict[tuple, list] = {}
    for row in rows:
        *key, events, revenue, sketch = row
        key = tuple(key[len(key) - 3 - keep:])
        found = grouped.get(key)
        if found is None:       # as Cell.merge adds: a first row's amounts as they are
            found = grouped[key] = [0, {c: Decimal(a) for c, a in (revenue or {}).items()},
                                    []]
        else:
            for currency, amount in (revenue or {}).items():
                found[1][currency] = found[1].get(currency, Decimal(0)) + Decimal(amount)
        found[0] += events
        if sketch is not None:
            found[2].append(sketch)
    return capped({key: Cell(events, revenue, _united(found))
                   for key, (events, revenue, found) in grouped.items()})


def _united(stored: list[bytes]):
    if not stored:
        return None
    if len(stored) == 1:
        return sketches.load(stored[0])
    return sketches.union([sketches.load(data) for data in stored], LG_K)
