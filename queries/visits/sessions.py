"""Pageviews cut into visits, and visits summed per quarter hour: pure, no database.

A visit is one visitor's pageviews on one site with no gap over the site's timeout (30
minutes by default); it belongs to the quarter hour of its first pageview. A pageview
starts a visit exactly when its visitor had none in the timeout before it, so the
starts among pageviews at or after ``t`` depend only on pageviews from ``t - timeout``
on: what lets ``build`` recompute a few hours from a window of events around them.

Quarter hours because every time zone in use is a whole number of them from UTC: a
visit then falls in one hour or day bucket of any zone, exactly.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import groupby
from operator import itemgetter
from typing import NamedTuple

MINUTE_MS = 60_000
QUARTER_MS = 15 * MINUTE_MS
HOUR_MS = 3_600_000
DEFAULT_TIMEOUT_MINUTES = 30
OTHER_PAGE = "(other)"
MAX_PAGES = 2_000        # distinct entry (exit) pages kept per site and hour; the rest: OTHER


class Pageview(NamedTuple):
    """One pageview; or, with ``until`` and ``views``, a run of ``views`` pageviews of
    one page from ``time`` to ``until`` with no gap that would end a visit (the load
    generator's backfill draws its visits so: a run per visit, page and hour); or, with
    ``views`` 0 and an ``event``, a custom event on the page (``queries.custom``): it
    continues or starts a visit as a pageview does, and counts as an interaction; or,
    with ``engaged``, the milliseconds the page was visible, sent when it was left: it
    adds to its visit's duration when it is for the visit's last page, and does nothing
    else (no interaction, no continuation). ``place``: where its event was recorded
    (``events.reads.placed_columns``), which orders pageviews of one instant."""

    visitor: str          # the (address, agent) pair as the sketches hash it; never stored
    time: int             # ms since the epoch
    page: str
    until: int | None = None
    views: int = 1
    event: tuple = ()     # a custom event's (name, props, revenue): see queries.custom
    engaged: int | None = None
    place: tuple = ()


class Visit(NamedTuple):
    start: int            # ms since the epoch of the first pageview
    last: int             # of the last one
    entry: str
    exit: str
    views: int
    events: int = 0       # custom events: interactions, so the visit is no bounce
    engaged: int = 0      # ms its last page was visible (the beacon's engagement)

    @property
    def bounce(self) -> bool:
        return self.views == 1 and not self.events

    @property
    def duration(self) -> int:
        """ms from the first pageview to the last, plus the last page's engagement."""
        return self.last - self.start + self.engaged


def sessionize(pageviews: Iterable[Pageview], timeout_ms: int) -> list[Visit]:
    """Every visit of ``pageviews`` (in any order): a visitor's pageviews sorted by
    time, a new visit after each gap over ``timeout_ms`` (a gap of exactly the timeout
    continues the visit). Two pageviews of one visitor at the same instant (a log's
    second) keep the order they were recorded in (their ``place``: a page before the
    icons it asks for), then of their pages' names: the result does not depend on the
    input's order.
    An engagement counts for the visit whose last page it names, when it comes within
    the timeout of the visit's last pageview or event, and at most the time since then
    (a client's figure, bounded by the server's clock)."""
    visits: list[Visit] = []
    ordered = sorted(pageviews, key=_order)
    for _, views in groupby(ordered, key=itemgetter(0)):
        start = last = None
        entry = page = ""
        count = events = engaged = 0
        for _, time, page_now, until, n, event, engagement, _ in views:
            if engagement is not None:
                if last is not None and time - last <= timeout_ms and page_now == page:
                    engaged = min(engagement, time - last)
                continue
            if last is not None and time - last > timeout_ms:
                visits.append(Visit(start, last, entry, page, count, events, engaged))
                start = None
            if start is None:
                start, entry, count, events = time, page_now, 0, 0
            last, page = time if until is None else until, page_now
            count += n
            events += bool(event)
            if n:
                engaged = 0
        if start is not None:
            visits.append(Visit(start, last, entry, page, count, events, engaged))
    return visits


def _order(view: Pageview) -> tuple:
    """Sorted by visitor and time; at one instant, pageviews before custom events
    before engagements, each in the order recorded (``place``), then by page and the
    events' own fields: one order whatever the input's."""
    kind = 2 if view.engaged is not None else 0 if view.views else 1
    name = view.event[0] if view.event else ""
    until = -1 if view.until is None else view.until       # runs beside single events
    return (view.visitor, view.time, kind, view.place, view.page, until, -view.views, name,
            repr(view.event), view.engaged or 0)


class Quarter(NamedTuple):
    """What the visits starting in one quarter hour add up to, and its pageviews."""

    visits: int
    bounces: int
    duration: int         # ms, summed over the visits
    views: int            # pageviews of those visits (views per visit = views / visits)
    pageviews: int        # pageviews made in the quarter, whatever visit they belong to


def quarter_of(ms: int) -> int:
    """The start (ms) of the quarter hour holding ``ms``."""
    return ms - ms % QUARTER_MS


def tally(visits: Iterable[Visit], pageviews: Iterable[Pageview]
          ) -> tuple[dict[int, list[int]], dict[str, dict]]:
    """Per quarter start, its ``Quarter`` fields as a list; and per page kind (``entry``,
    ``exit``, ``views``) ``{(quarter, page): [visits, bounces, duration]}`` (``views``:
    ``[pageviews]``), for the rows of the pages panels. Pageviews count one each (see
    ``count_views`` for them counted apart)."""
    quarters: dict[int, list[int]] = {}
    pages: dict[str, dict] = {"entry": {}, "exit": {}, "views": {}}
    pageviews = [view for view in pageviews if view.views]
    for visit in visits:
        q = quarter_of(visit.start)
        row = quarters.get(q)
        if row is None:
            row = quarters[q] = [0, 0, 0, 0, 0]
        row[0] += 1
        row[1] += visit.bounce
        row[2] += visit.duration
        row[3] += visit.views
        for kind, page in (("entry", visit.entry), ("exit", visit.exit)):
            cell = pages[kind].get((q, page))
            if cell is None:
                cell = pages[kind][(q, page)] = [0, 0, 0]
            cell[0] += 1
            cell[1] += visit.bounce
            cell[2] += visit.duration
    count_views(quarters, pages, ((quarter_of(view.time), view.page, 1)
                                  for view in pageviews))
    return quarters, pages


def count_views(quarters: dict[int, list[int]], pages: dict[str, dict],
                cells: Iterable[tuple[int, str, int]]) -> None:
    """Add ``(quarter, page, pageviews)`` cells to a ``tally``'s output."""
    for q, page, n in cells:
        row = quarters.get(q)
        if row is None:
            row = quarters[q] = [0, 0, 0, 0, 0]
        row[4] += n
        views = pages["views"].get((q, page))
        if views is None:
            pages["views"][(q, page)] = [n]
        else:
            views[0] += n
