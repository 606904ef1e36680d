"""The History page's own part of the URL (range, granularity, mode, comparison; filter,
bots, assets) and the period it asks for: read by the page, its comparison and its
panels alike."""

from __future__ import annotations

from dataclasses import dataclass

from queries import validation
from queries.dimensions.encoding import MAX_VALUE, dimension
from queries.reads.history import counts_people

from . import reads
from .ranges import DEFAULT_PRESET, GRANULARITIES, PRESETS, Period, period
from .state import ASSETS_KEY, BOTS_KEY, ShellState, choice, filter_pair, first

MODES = {"lines": "Lines", "stacked": "Stacked"}


@dataclass(frozen=True)
class Controls:
    """The page's own part of the URL."""

    preset: str
    granularity: str
    mode: str
    compare: bool
    start: str | None
    end: str | None

    @classmethod
    def from_query(cls, query) -> Controls:
        return cls(preset=choice(query, "range", PRESETS, DEFAULT_PRESET),
                   granularity=choice(query, "gran", GRANULARITIES, "auto"),
                   mode=choice(query, "mode", MODES, "lines"),
                   compare=first(query, "compare") == "1",
                   start=first(query, "start"), end=first(query, "end"))


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


def shown_period(query) -> Period:
    """The period the URL asks for, as of the current cache bucket."""
    shell, controls = ShellState.from_query(query), Controls.from_query(query)
    return period(controls.preset, controls.granularity, reads.now(reads.history_seconds()),
                  shell.tz, controls.start, controls.end)
