"""The Sources page's pieces: what each source saw, as KPI cards and a table per page
and day (drawn by the browser: ``statictable``)."""

from __future__ import annotations

import pandas as pd
from dash import html

from .numbers import count, percent
from .statictable import cell, static_table

HEAD = ("Day", "Page", "Log", "Beacon", "Difference", "Bots", "AI crawlers",
        "Without script")
NUMBERS = ("log_pageviews", "beacon_pageviews", "difference", "log_bots", "ai_crawlers",
           "without_script")


def source_cards(totals: dict[str, int], share: float | None) -> list:
    """The range's figures: each source's pageviews, what only the log shows, and the
    estimated share of people whose browser never ran the script."""
    cards = [
        ("sources-kpi-log", "Log pageviews", count(totals["log_pageviews"]),
         "people, GET answered 2xx/304"),
        ("sources-kpi-beacon", "Beacon pageviews", count(totals["beacon_pageviews"]),
         "people"),
        ("sources-kpi-share", "Blocked or no JavaScript", percent(
            None if share is None else 100 * share, 1), "of the log's pageviews, on pages "
         "both saw" if share is not None else "needs pages both sources saw"),
        ("sources-kpi-bots", "Bot requests", count(totals["log_bots"]),
         "for pages, in the log only"),
        ("sources-kpi-ai", "AI crawlers", count(totals["ai_crawlers"]),
         "among the bots, by user agent"),
        ("sources-kpi-noscript", "Without the script", count(totals["without_script"]),
         "log pageviews of visitors the beacon never saw"),
    ]
    return [html.Div(className="kpi", children=[
        html.Div(label, className="kpi-label"),
        html.Div(value, id=kpi_id, className="kpi-value"),
        html.Div(note, className="kpi-note"),
    ]) for kpi_id, label, value, note in cards]


def source_table(rows: pd.DataFrame) -> html.Div:
    """A row per page and day: each source's pageviews, their difference, the log's bots,
    AI crawlers and pageviews without the script."""
    body = [[cell(f"{row.day:%Y-%m-%d}"), cell(str(row.page), "page-cell"),
             *(cell(count(getattr(row, name)), "num") for name in NUMBERS)]
            for row in rows.itertuples()]
    return static_table(HEAD, body, "sources-table")
