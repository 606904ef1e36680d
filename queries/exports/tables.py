"""A site's days as the rows of Plausible's tables, from what hitboard holds: visitors
from the sketches (people), visits, bounces, durations and pageviews from the visits,
the other tables' visitors and pageviews (people's hits) from the dimension counters,
entry and exit pages from the visits, custom events from their cells.

Columns hitboard does not hold are 0 (``visits``, ``bounces`` and ``visit_duration`` of
sources, locations, devices, browsers and operating systems; a page's visits), or empty
(region, city, versions, UTM content and term, scroll depth). Entry and exit pages count
visits, not visitors: their ``visitors`` carry the visits. Sources carry the referrer
host (``(direct)`` as Plausible's empty source); UTM values are counted apart from the
referrer in hitboard, so they are not crossed with it here.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

from .. import validation
from ..custom import reads as custom_reads
from ..dimensions import reads as dimension_reads
from ..visits import reads as visit_reads

DIRECT = "(direct)"
# table -> (dimension of the counters, how a value becomes the row's keys)
COUNTED = {"sources": ("referrer", lambda v: ("" if v == DIRECT else v, "", "", "", "", "",
                                               "")),
           "locations": ("country", lambda v: (v, "", "")),
           "devices": ("device", lambda v: (v,)),
           "browsers": ("browser", lambda v: (v, "")),
           "operating_systems": ("os", lambda v: (v, ""))}


def days(first: dt.date, end: dt.date, tz: str) -> list[tuple[dt.date, dt.datetime,
                                                               dt.datetime]]:
    """``(date, start, end)`` of each day of ``tz`` from ``first`` up to ``end``
    (exclusive), its bounds in UTC."""
    zone = validation.timezone(tz)

    def edge(day: dt.date) -> dt.datetime:
        return dt.datetime(day.year, day.month, day.day, tzinfo=zone).astimezone(dt.UTC)

    return [(first + dt.timedelta(days=i), edge(first + dt.timedelta(days=i)),
             edge(first + dt.timedelta(days=i + 1))) for i in range((end - first).days)]


def _n(value) -> int:
    try:
        return 0 if value is None or value != value else int(value)
    except (TypeError, ValueError):      # pandas' NA
        return 0


def visitors_rows(db, site: str, first: dt.date, end: dt.date, tz: str) -> Iterator[list]:
    """``date, visitors, pageviews, bounces, visits, visit_duration`` per day (seconds
    summed over the day's visits)."""
    span = days(first, end, tz)
    if not span:
        return
    lo, hi = span[0][1], span[-1][2]
    seen = dimension_reads.visitors_series(db, site, lo, hi, "day", tz, humans=True)
    visits = visit_reads.series(db, site, lo, hi, "day", tz)
    for (day, _, _), people, (_, row) in zip(span, seen["visitors"], visits.iterrows(),
                                             strict=True):
        yield [day.isoformat(), _n(people), _n(row["pageviews"]), _n(row["bounces"]),
               _n(row["visits"]), round(_n(row["duration"]) / 1000)]


def day_rows(db, site: str, table: str, day: dt.date, lo: dt.datetime, hi: dt.datetime
             ) -> list[list]:
    """The rows of ``table`` (not ``visitors``) for one day, most visitors first."""
    date = day.isoformat()
    if table in COUNTED:
        by, keys = COUNTED[table]
        frame = dimension_reads.breakdown(db, site, by, lo, hi, humans=True)
        rows = [[date, *keys(r.value), _n(r.visitors), 0, 0, 0, _n(r.hits)]
                for r in frame.itertuples()]
        if table == "sources":       # ..., pageviews, visitors, visits, duration, bounces
            rows = [[*r[:8], r[12], r[8], 0, 0, 0] for r in rows]
        return rows
    if table == "pages":
        views = visit_reads.page_sums(db, site, lo, hi, "views")["pageviews"]
        people = {r.value: _n(r.visitors) for r in dimension_reads.breakdown(
            db, site, "page", lo, hi, humans=True).itertuples()}
        return sorted(([date, site, page, 0, people.get(page, 0), _n(n), "", 0]
                       for page, n in views.items()), key=lambda r: (-r[4], -r[5], r[2]))
    if table in ("entry_pages", "exit_pages"):
        sums = visit_reads.page_sums(db, site, lo, hi, table.split("_")[0])
        rows = []
        for page, r in sums.sort_values("visits", ascending=False).iterrows():
            visits, duration = _n(r["visits"]), round(_n(r["duration"]) / 1000)
            if table == "entry_pages":   # visitors, entrances, visit_duration, bounces, pv
                rows.append([date, page, visits, visits, duration, _n(r["bounces"]), 0])
            else:                        # visitors, visit_duration, exits, bounces, pv
                rows.append([date, page, visits, duration, visits, _n(r["bounces"]), 0])
        return rows
    if table == "custom_events":
        frame = custom_reads.events(db, site, lo, hi)
        return [[date, r.value, "", "", _n(r.visitors), _n(r.conversions)]
                for r in frame.itertuples()]
    raise ValueError(f"no table {table!r}")
