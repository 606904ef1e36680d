"""A report's figures: what the email says about one period of a site, read by the same
functions as ``hitboard report --metric M`` (visits, pageviews, bounce rate, visit
duration, views per visit: the visits' quarters) and ``hitboard visitors --humans``
(sketches: people, as History counts) over the period's days, so the email and the CLI
agree to the unit."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from urllib.parse import urlencode

import pandas as pd

from .. import validation
from ..annotations import annotations_between
from ..dimensions.pages import ranked_pages
from ..dimensions.reads import breakdown, visitors
from ..reads.history import chart, goal_figures, visit_figures
from .periods import previous

# (key, label) in the order the email shows them.
METRICS = (("pageviews", "Pageviews"), ("visitors", "Visitors"), ("visits", "Visits"),
           ("bounce_rate", "Bounce rate"), ("visit_duration", "Visit duration"),
           ("views_per_visit", "Views per visit"))
TOP = 10


@dataclass
class Report:
    site: str
    period: str
    tz: str
    start: dt.datetime              # UTC, the period's first local midnight
    end: dt.datetime                # UTC, excluded
    figures: dict[str, float | None]
    before: dict[str, float | None]     # the previous period's
    pages: list[tuple[str, int]] = field(default_factory=list)
    referrers: list[tuple[str, int]] = field(default_factory=list)
    goals: list[tuple[str, int, str]] = field(default_factory=list)   # name, conv., revenue
    notes: list[tuple[dt.datetime, str]] = field(default_factory=list)
    chart: pd.DataFrame | None = None   # History's chart of the period, per day
    link: str = ""


def period_figures(db, site: str, start: dt.datetime, end: dt.datetime
                   ) -> dict[str, float | None]:
    """The six figures of [start, end)."""
    totals = visit_figures(db, site, start, end, now=end)
    people = visitors(db, site, start, end, humans=True).n
    return {"pageviews": totals.pageviews, "visitors": people,
            "visits": totals.visits, "bounce_rate": totals.bounce_rate,
            "visit_duration": totals.visit_duration,
            "views_per_visit": totals.views_per_visit}


def gather(db, site: str, period: str, start: dt.datetime, end: dt.datetime, tz: str,
           base_url: str) -> Report:
    """Everything the report of [start, end) shows."""
    before_start, before_end = previous(period, start, tz)
    report = Report(site, period, tz, start, end, period_figures(db, site, start, end),
                    period_figures(db, site, before_start, before_end))
    # History's Pages panel by default: people's hits, static files left out.
    pages = ranked_pages(db, site, start, end, TOP, humans=True, assets=False, now=end)
    report.pages = [(str(page), int(hits)) for page, hits in pages["hits"].items()]
    referrers = breakdown(db, site, "referrer", start, end, n=TOP, humans=True)
    report.referrers = [(str(row.value), int(row.hits)) for row in referrers.itertuples()]
    goals = goal_figures(db, site, start, end, now=end)
    report.goals = [(str(row["value"]), int(row["conversions"] or 0),
                     str(row["revenue"] or ""))
                    for row in goals.to_dict("records")]
    report.notes = [(note["time"], note["text"])
                    for note in annotations_between(db, site, start, end)]
    report.chart = chart(db, site, start, end, "day", tz).frame
    report.link = history_link(base_url, site, start, end, tz)
    return report


def history_link(base_url: str, site: str, start: dt.datetime, end: dt.datetime,
                 tz: str) -> str:
    """History's view of the same days, zone and granularity."""
    zone = validation.timezone(tz)
    zone_days = [t.astimezone(zone).date().isoformat() for t in (start, end)]
    query = urlencode([("site", site), ("tz", tz), ("range", "custom"),
                       ("start", zone_days[0]), ("end", zone_days[1]), ("gran", "day")],
                      safe="/:")
    return f"{base_url}/history?{query}"

