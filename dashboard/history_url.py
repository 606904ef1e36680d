"""The History page's own part of the URL (range, granularity, mode, comparison) and the
period it asks for: read by the page, its comparison and its panels alike."""

from __future__ import annotations

from dataclasses import dataclass

from . import reads
from .ranges import DEFAULT_PRESET, GRANULARITIES, PRESETS, Period, period
from .state import ShellState, choice, first

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


def shown_period(query) -> Period:
    """The period the URL asks for, as of the current cache bucket."""
    shell, controls = ShellState.from_query(query), Controls.from_query(query)
    return period(controls.preset, controls.granularity, reads.now(reads.history_seconds()),
                  shell.tz, controls.start, controls.end)
