"""Plausible's CSV export layout, shared by the export and the import: the tables, their
columns in Plausible's order, which of them are text (the row's key) and which counts.

A file is ``imported_<table>_<first day>_<last day>.csv`` (days ``YYYYMMDD``, both
inclusive); Plausible also accepts the name without ``imported_``, and so do we.
"""

from __future__ import annotations

import re
from typing import NamedTuple


class Table(NamedTuple):
    name: str
    columns: tuple[str, ...]        # every column, in Plausible's order
    keys: tuple[str, ...]           # text columns: what a row is about
    required: tuple[str, ...]       # columns a file must hold (besides ``date``)

    @property
    def counts(self) -> tuple[str, ...]:
        return tuple(c for c in self.columns if c != "date" and c not in self.keys)


_VISIT_COUNTS = ("visitors", "visits", "visit_duration", "bounces", "pageviews")

TABLES = {t.name: t for t in (
    Table("visitors", ("date", "visitors", "pageviews", "bounces", "visits",
                       "visit_duration"), (), ("visitors", "pageviews", "visits")),
    Table("pages", ("date", "hostname", "page", "visits", "visitors", "pageviews",
                    "scroll_depth", "pageleave_visitors"), ("hostname", "page"),
          ("page", "visitors", "pageviews")),
    Table("sources", ("date", "source", "referrer", "utm_source", "utm_medium",
                      "utm_campaign", "utm_content", "utm_term", "pageviews", "visitors",
                      "visits", "visit_duration", "bounces"),
          ("source", "referrer", "utm_source", "utm_medium", "utm_campaign", "utm_content",
           "utm_term"), ("source", "visitors")),
    Table("entry_pages", ("date", "entry_page", "visitors", "entrances", "visit_duration",
                          "bounces", "pageviews"), ("entry_page",), ("entry_page", "entrances")),
    Table("exit_pages", ("date", "exit_page", "visitors", "visit_duration", "exits",
                         "bounces", "pageviews"), ("exit_page",), ("exit_page", "exits")),
    Table("locations", ("date", "country", "region", "city", *_VISIT_COUNTS),
          ("country", "region", "city"), ("country", "visitors")),
    Table("devices", ("date", "device", *_VISIT_COUNTS), ("device",), ("device", "visitors")),
    Table("browsers", ("date", "browser", "browser_version", *_VISIT_COUNTS),
          ("browser", "browser_version"), ("browser", "visitors")),
    Table("operating_systems", ("date", "operating_system", "operating_system_version",
                                *_VISIT_COUNTS), ("operating_system",
                                                  "operating_system_version"),
          ("operating_system", "visitors")),
    Table("custom_events", ("date", "name", "link_url", "path", "visitors", "events"),
          ("name", "link_url", "path"), ("name", "visitors", "events")),
)}

_FILE = re.compile(r"(?:imported_)?(?P<table>[a-z_]+?)_(?P<first>\d{8})_(?P<last>\d{8})\.csv")


def file_name(table: str, first: str, last: str) -> str:
    """The name of ``table``'s file for the days ``first`` to ``last`` (``YYYYMMDD``)."""
    return f"imported_{table}_{first}_{last}.csv"


def parse_name(name: str) -> tuple[Table, str, str] | None:
    """``(table, first, last)`` of a file name of the layout, else None."""
    found = _FILE.fullmatch(name)
    if found is None or found["table"] not in TABLES:
        return None
    return TABLES[found["table"]], found["first"], found["last"]
