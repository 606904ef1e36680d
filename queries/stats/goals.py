"""Goals: what a site counts as a conversion. A goal is a custom event's name
(``Signup``) or a page pattern: ``*`` stands for any characters but ``/`` (one path
segment, ``/blog/*``), ``**`` for any characters (``/checkout/**``); anything else
matches itself. Goals are read when a range is shown, so a goal added today counts past
events and pageviews too.

A pattern is matched by RE2 (``google-re2``), in time linear in the page's length: with
Python's backtracking ``re``, a pattern of a few ``**`` against a stranger's page of
2,000 ``/`` took minutes, holding the GIL, so every thread of the server (``/hit``'s
included) waited. A pattern holds at most ``MAX_ANYWHERE`` ``**``."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

import re2

from .. import validation
from ..errors import HitboardError

KINDS = ("event", "page")
MAX_GOALS = 100
MAX_NAME = 120          # an event's name, as the beacon takes it
MAX_ANYWHERE = 3        # "**" in one page pattern
_STARS = re.compile(r"(\*\*|\*)")
_OPTIONS = re2.Options()
_OPTIONS.dot_nl = True          # "**" spans any character
_OPTIONS.never_capture = True


class GoalError(HitboardError):
    pass


class Goal(NamedTuple):
    kind: str           # "event" or "page"
    value: str          # the event's name, or the page pattern

    @property
    def label(self) -> str:
        return f"Visit {self.value}" if self.kind == "page" else self.value

    def as_doc(self) -> dict:
        return {self.kind: self.value}


def goal(kind: str, value) -> Goal:
    """A checked goal: an event name, or a page pattern starting with ``/``."""
    if kind not in KINDS:
        raise GoalError(f"a goal is an event or a page, not {str(kind)[:20]!r}")
    if not isinstance(value, str) or not value.strip():
        what = "name" if kind == "event" else "pattern"
        raise GoalError(f"a {kind} goal needs a non-empty {what}")
    try:
        validation.text(value, f"the goal's {kind}", MAX_NAME if kind == "event"
                        else validation.MAX_PAGE)
    except HitboardError as exc:
        raise GoalError(str(exc)) from None
    if kind == "page" and not value.startswith("/"):
        raise GoalError(f"a page pattern starts with '/', e.g. /blog/* (got {value[:40]!r})")
    if kind == "page" and (anywhere := _STARS.split(value).count("**")) > MAX_ANYWHERE:
        raise GoalError(f"a page pattern holds at most {MAX_ANYWHERE} '**' (this one has "
                        f"{anywhere}): use '*' for one path segment")
    return Goal(kind, value)


def from_doc(doc: dict) -> Goal:
    (kind, value), = doc.items()
    return Goal(kind, value)


@lru_cache(maxsize=1024)
def _pattern(pattern: str):
    """The RE2 program of a pattern (any pattern: one stored before the ``**`` limit
    too)."""
    regex = "".join(".*" if part == "**" else "[^/]*" if part == "*" else re2.escape(part)
                    for part in _STARS.split(pattern))
    return re2.compile(regex, _OPTIONS)


@lru_cache(maxsize=1024)
def _parts(pattern: str) -> tuple[str, ...]:
    return tuple(_STARS.split(pattern))


def matches(pattern: str, page: str) -> bool:
    """Whether ``page`` is one of the pages ``pattern`` names. A pattern of one star
    (``/blog/*``, ``/checkout/**``) is answered with string tests, the others by RE2
    once the page has their head and tail: RE2's Python wrapper costs 5-20 µs a call,
    ``re`` ~1 µs on an ordinary page."""
    parts = _parts(pattern)
    if len(parts) == 1:
        return page == pattern
    head, tail = parts[0], parts[-1]
    if len(page) < len(head) + len(tail) or not page.startswith(head) \
            or not page.endswith(tail):
        return False
    if len(parts) == 3:
        return parts[1] == "**" or "/" not in page[len(head):len(page) - len(tail)]
    try:
        return _pattern(pattern).fullmatch(page) is not None
    except UnicodeEncodeError:      # a lone surrogate, which no stored page holds
        return _pattern(pattern).fullmatch(page.encode("utf-8", "replace").decode()) \
            is not None
