"""Presenter mode's URL: which views it rotates, how often, its window and theme.

``/present?cycle=30&views=live,history-30d,top`` (``&visits=1``: the visits begun in
the last 30 minutes in place of the visitors now; or ``?present=1&...`` on any page,
which assets/present.js sends here) shows each view for ``cycle`` seconds in turn, as
Grafana's playlists do. Bad values fall back to the defaults: a projector shows
something rather than an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dashboard.state import first

VIEWS = {"live": "Live", "history-30d": "Last 30 days", "top": "Top pages today"}
WINDOWS = (5, 15, 30, 60)
DEFAULT_WINDOW = 15
MIN_CYCLE, MAX_CYCLE = 5, 3600


@dataclass(frozen=True)
class PresentView:
    views: tuple[str, ...]
    cycle: int | None     # seconds per view; None: no rotation
    window: int           # minutes of the live line
    theme: str            # dark unless the URL asks for light
    visits: bool = False  # the people's card: visits begun in the last 30 minutes

    @classmethod
    def from_query(cls, query: Mapping[str, list[str]]) -> PresentView:
        names = [v.strip() for v in (first(query, "views") or "").split(",")]
        views = tuple(dict.fromkeys(v for v in names if v in VIEWS)) or ("live",)
        cycle = _int(first(query, "cycle"))
        if cycle is not None and not MIN_CYCLE <= cycle <= MAX_CYCLE:
            cycle = None
        window = _int(first(query, "window"))
        return cls(views=views, cycle=cycle if len(views) > 1 else None,
                   window=window if window in WINDOWS else DEFAULT_WINDOW,
                   theme="light" if first(query, "theme") == "light" else "dark",
                   visits=first(query, "visits") == "1")


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None
