"""Visit metrics in the CLI: ``report --metric visits|pageviews|bounce_rate|
visit_duration|views_per_visit`` and ``breakdown --by entry_page|exit_page``."""

from __future__ import annotations

import click

from queries import validation
from queries.errors import InvalidRangeError
from queries.imports import reads as imported
from queries.validation import WHOLE_SITE
from queries.visits import reads

from .common import present, whole

PAGE_DIMENSIONS = {"entry_page": "entry", "exit_page": "exit"}
APPROXIMATE = ("note: the range cuts a quarter hour, which counts whole (visits are "
               "stored per quarter hour of their first pageview)")


def report_rows(db, site: str, pages: tuple[str, ...], granularity: str, metric: str,
                start, end, tz: str, imports: bool = True
                ) -> tuple[list[dict], bool, str | None]:
    """``time,page,<metric>`` rows per bucket (bounce rate in percent, duration in
    seconds, empty where there is no visit), whether they are exact, and what the
    imported days added (the whole site's, per day or longer; ``imports`` False: none)."""
    if len(pages) > 1:
        raise InvalidRangeError("visit metrics take one --page at most")
    page = validation.page(pages[0]) if pages else None
    if page is not None and metric == "views_per_visit":
        raise InvalidRangeError("views per visit is the whole site's: no --page")
    frame = reads.series(db, site, start, end, granularity, tz, page)
    added = imported.Added(0, True)
    if imports and page is None:
        added = imported.add_visits(db, site, frame, start, end, granularity, tz)
    rows = [{"time": time.isoformat(), "page": page or WHOLE_SITE,
             metric: value(metric, number)} for time, number in frame[metric].items()]
    return rows, frame.attrs["exact"], imported.note(added)


def value(metric: str, number: float) -> int | float | None:
    """A metric as printed: counts whole, rates and means to two decimals."""
    number = present(number)
    if number is None:
        return None
    if metric in ("visits", "pageviews"):
        return int(number)
    return round(float(number), 2)


def page_rows(db, site: str, by: str, start, end, n: int, tz: str = "UTC",
              imports: bool = True) -> tuple[list[dict], bool, str | None]:
    """``value,visits,bounce_rate,visit_duration`` per entry or exit page, whether
    exact, and what imported days added (``imports`` False: none)."""
    frame = reads.pages(db, site, start, end, PAGE_DIMENSIONS[by])
    days = 0
    if imports:
        counts, days = imported.breakdown_counts(db, site, by, start, end, tz)
        frame = imported.add_page_visits(frame, counts)
    frame = frame.head(n)
    rows = [{"value": row.value, "visits": whole(row.visits),
             "bounce_rate": value("bounce_rate", row.bounce_rate),
             "visit_duration": value("visit_duration", row.visit_duration)}
            for row in frame.itertuples()]
    return rows, frame.attrs["exact"], imported.note(imported.Added(days, True))


def note_if_approximate(exact: bool) -> None:
    if not exact:
        click.echo(APPROXIMATE, err=True)
