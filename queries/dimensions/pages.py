"""The pages people read, as every view ranks them by default: the page dimension's
hits by humans, static files (``assets``) left out, with their visitors.

History's pages panel, Live's and the presenter's "Top pages today" all read them here,
so a page ranks the same everywhere. A counter document holds ``CAPS["page"]`` pages at
most, the rest summed as ``(other)``: an hour in which a scanner asked hundreds of paths,
or a day it reached first, can send there the hits of a page the range ranks. When the
range's ``(other)`` holds hits, the pages ranked first are counted again from the hit
counters (``stats.*``: a document per page, no cap, bots counted apart), so a page shown
gets every hit. Hours counted before the page was a dimension (a
store written by an older hitboard) hold no page values: the hit counters then rank the
pages, every hit, no visitors, and ``attrs["note"]`` says so when that covers only part
of the range.
"""

from __future__ import annotations

import datetime as dt

import pandas as pd

from .. import validation
from ..errors import InvalidPageError
from ..stats.catalog import top_pages
from ..stats.series import series
from .assets import kind
from .classify import BOT
from .encoding import OTHER
from .reads import breakdown

PAGE = "page"
# Pages read before static files are left out, so that ``n`` pages remain (a site's top
# 60 requests hold rarely more than a few dozen files: styles, scripts, icons).
PAGES_READ = 60
RECOUNTED = 3            # pages counted again per page shown, when the caps lost hits
EVERY_HIT_NOTE = ("Pages count every hit, bots included, without visitors: part of this "
                  "range was recorded before pages were counted by bot.")


def ranked_pages(db, site: str, start: dt.datetime, end: dt.datetime, n: int = 10,
                 humans: bool = True, assets: bool = False,
                 now: dt.datetime | None = None) -> pd.DataFrame:
    """The ``n`` pages with most hits in [start, end), bots left out if ``humans``,
    static files left out unless ``assets``: index ``page``, columns ``hits`` and
    ``visitors`` (as ``queries.top_pages``, which has no visitors); ``attrs``:
    ``every_hit`` when the hit counters ranked them (see the module doc), and the
    breakdown's ``exact`` and ``counted``."""
    frame = breakdown(db, site, PAGE, start, end, humans=humans, now=now)
    bots = breakdown(db, site, "bot", start, end, now=now)
    counted = int(bots.loc[bots["value"] != BOT, "hits"].sum() if humans
                  else bots["hits"].sum())
    note, every_hit = "", False
    if not counted or int(frame["hits"].sum()) < counted:
        every = top_pages(db, site, start, end, n=PAGES_READ)
        frame = pd.DataFrame({"value": [str(p) for p in every.index],
                              "hits": every["hits"].to_numpy(dtype="int64"),
                              "visitors": pd.array([None] * len(every), dtype="Int64")})
        note, every_hit = (EVERY_HIT_NOTE if counted else ""), True
    if not assets:
        frame = frame[frame["value"].map(kind) != "asset"]
    if not every_hit and (frame["value"] == OTHER).any():
        frame = _recounted(db, site, frame, max(int(n), 0) * RECOUNTED, humans, start, end)
    ranked = frame.head(max(int(n), 0)).set_index("value").rename_axis(PAGE)
    ranked.attrs = {"note": note, "every_hit": every_hit, "exact": frame.attrs.get(
        "exact", True) or every_hit, "counted": frame.attrs.get("counted", (start, end))}
    return ranked


def _recounted(db, site: str, frame: pd.DataFrame, first: int, humans: bool,
               start: dt.datetime, end: dt.datetime) -> pd.DataFrame:
    """``frame`` with the hits of its ``first`` pages counted again from the hit
    counters over the span the breakdown counted (a cap only ever took hits away: a
    page keeps the larger count, ``(other)`` gives back what they found), ranked again."""
    lo, hi = frame.attrs.get("counted", (start, end))
    pages = [value for value in frame["value"].head(first) if _storable(value)]
    if not pages:
        return frame
    counted = series(db, site, lo, hi, "day", pages, humans=humans).sum()
    rows = frame.to_dict("records")
    found = 0
    for row in rows:
        if row["value"] in counted.index:
            more = max(int(counted[row["value"]]) - int(row["hits"]), 0)
            row["hits"], found = int(row["hits"]) + more, found + more
    for row in rows:
        if row["value"] == OTHER:
            row["hits"] = max(int(row["hits"]) - found, 0)
    rows = [row for row in rows if row["hits"] > 0]
    rows.sort(key=lambda row: (row["value"] == OTHER, -row["hits"], row["value"]))
    recounted = pd.DataFrame(rows, columns=frame.columns).astype(frame.dtypes.to_dict())
    recounted.attrs.update(frame.attrs)
    return recounted


def _storable(value: str) -> bool:
    """Whether ``value`` names a page of the hit counters (not ``(other)``, nor a value
    they refuse)."""
    if value == OTHER:
        return False
    try:
        validation.page(value)
    except InvalidPageError:
        return False
    return True
