"""The export's ZIP: one CSV a table, named as Plausible names them, every cell a
spreadsheet reads as text where it could be read as a formula."""

from __future__ import annotations

import csv
import datetime as dt
import io
import zipfile
from typing import BinaryIO

from ..imports.archive import FORMULA
from ..imports.layout import TABLES, file_name
from ..stats.sites import site_settings
from . import tables


def _cell(value):
    """A text cell starting like a formula gets a leading quote (counts stay numbers)."""
    if isinstance(value, str) and value.startswith(FORMULA):
        return "'" + value
    return value


def zone(db, site: str) -> str:
    """The zone whose days an export of ``site`` cuts: the site's, else UTC."""
    return site_settings(db, site).tz or "UTC"


def write(db, site: str, first: dt.date, end: dt.date, out: BinaryIO,
          tz: str | None = None) -> dict[str, int]:
    """Write ``site``'s days ``first`` to ``end`` (exclusive) of its zone (``tz``, else
    the site's, else UTC) to ``out`` as a ZIP; returns the rows of each file."""
    zone_name = tz or zone(db, site)
    last = end - dt.timedelta(days=1)
    span = tables.days(first, end, zone_name)
    written = {}
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zipped:
        for name, table in TABLES.items():
            if name == "visitors":
                rows = list(tables.visitors_rows(db, site, first, end, zone_name))
            else:
                rows = [row for day, lo, hi in span
                        for row in tables.day_rows(db, site, name, day, lo, hi)]
            text = io.StringIO()
            writer = csv.writer(text, lineterminator="\n")
            writer.writerow(table.columns)
            writer.writerows([_cell(v) for v in row] for row in rows)
            member = file_name(name, f"{first:%Y%m%d}", f"{last:%Y%m%d}")
            zipped.writestr(member, text.getvalue())
            written[member] = len(rows)
    return written
