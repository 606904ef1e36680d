"""The History page's own part of the URL (range, granularity, mode, comparison, the
chart's metric; filter,
bots, assets) and the period it asks for: read by the page, its comparison and its
panels alike."""

from __future__ import annotations

from dataclasses import dataclass

from pymongo.errors import PyMongoError

import queries
from dashboard import reads
from dashboard.ranges import (
    ALL_TIME,
    DEFAULT_PRESET,
    GRANULARITIES,
    PRESETS,
    Period,
    default_preset,
    period,
)
from dashboard.state import ASSETS_KEY, BOTS_KEY, ShellState, choice, filter_pair, first
from queries import validation
from queries.dimensions.encoding import MAX_VALUE, dimension
from queries.reads.history import HITS, METRICS, counts_people

MODES = {"lines": "Lines", "stacked": "Stacked"}
# The search the controls were last put in step with (None: as the page was drawn).
SYNCED_STORE = "history-synced"


@dataclass(frozen=True)
class Controls:
    """The page's own part of the URL."""

    preset: str
    granularity: str
    mode: str
    compare: bool
    start: str | None
    end: str | None
    metric: str = HITS

    @classmethod
    def from_query(cls, query, default: str = DEFAULT_PRESET) -> Controls:
        """The controls the URL holds; ``default``: the range without ``range=``."""
        return cls(preset=choice(query, "range", PRESETS, default),
                   granularity=choice(query, "gran", GRANULARITIES, "auto"),
                   mode=choice(query, "mode", MODES, "lines"),
                   compare=first(query, "compare") == "1",
                   start=first(query, "start"), end=first(query, "end"),
                   metric=choice(query, "metric", METRICS, HITS))


@dataclass(frozen=True)
class Options:
    """The panels' part of the URL: one filter, bots included, assets included."""

    filter: tuple[str, str] | None
    bots: bool
    assets: bool

    @classmethod
    def from_query(cls, query) -> Options:
        """Raises ``InvalidRangeError`` (a message, not a traceback) for a bad filter."""
        pair = filter_pair(query)
        if pair is not None:
            by, value = pair
            dimension(by)
            if not value or len(value) > MAX_VALUE:
                raise validation.InvalidRangeError(
                    f"a filter is dimension:value, with a value of 1 to {MAX_VALUE} characters")
        return cls(pair, first(query, BOTS_KEY) == "1", first(query, ASSETS_KEY) == "1")

    @property
    def humans(self) -> bool:
        return counts_people(self.filter, self.bots)


def in_step(synced, search) -> bool:
    """Whether the controls show ``search``: drawn from it, or last synced to it."""
    return synced is None or synced == search


def site_span(site: str | None):
    """The UTC minutes of the site's first and last hits (None: none, or no site)."""
    if not site:
        return None
    return reads.shared(queries.site_span, site, seconds=reads.history_seconds())


def opening_preset(query) -> str:
    """The range the URL's site opens on without ``range=``: the last 7 days if they
    hold hits, else all of its days."""
    shell = ShellState.from_query(query)
    try:
        site = reads.resolve_site(shell.site)
        return default_preset(site_span(site), reads.now(reads.history_seconds()), shell.tz)
    except (queries.HitboardError, PyMongoError):
        return DEFAULT_PRESET           # a bad site or zone, a store down: the page says why


def controls_of(query) -> Controls:
    """The page's controls as the URL holds them, the site's opening range by default."""
    default = DEFAULT_PRESET if first(query, "range") else opening_preset(query)
    return Controls.from_query(query, default)


def shown_period(query) -> Period:
    """The period the URL asks for, as of the current cache bucket."""
    shell, controls = ShellState.from_query(query), controls_of(query)
    span = site_span(reads.resolve_site(shell.site)) if controls.preset == ALL_TIME else None
    return period(controls.preset, controls.granularity, reads.now(reads.history_seconds()),
                  shell.tz, controls.start, controls.end, span)
