"""The view's state lives in the URL query string, so a link reproduces the view.

The shell owns ``site``, ``page`` (repeated, at most ``MAX_PAGES``), ``tz`` and ``theme``;
each page owns its own keys (``window`` on the live page, ``range``... on the historical
page). Values are kept as raw strings here: they are validated where they are used, and a
bad one becomes a message in the page, not a traceback.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import parse_qs, urlencode

MAX_PAGES = 10
THEMES = ("light", "dark")
SHELL_KEYS = ("site", "page", "tz", "theme")
DEFAULT_TZ = "UTC"

Query = dict[str, list[str]]


def parse_search(search: str | None) -> Query:
    """``?a=1&page=/x&page=/y`` → ``{"a": ["1"], "page": ["/x", "/y"]}``."""
    text = (search or "").removeprefix("?")
    return {key: values for key, values in parse_qs(text, keep_blank_values=True).items()}


def from_kwargs(kwargs: Mapping[str, str | list[str]]) -> Query:
    """The query a Dash page layout receives as keyword arguments, as a :data:`Query`."""
    return {key: list(value) if isinstance(value, list | tuple) else [str(value)]
            for key, value in kwargs.items()}


def encode(query: Mapping[str, Iterable[str]]) -> str:
    """The search string for ``query`` (``""`` when empty); shell keys come first."""
    ordered = [k for k in SHELL_KEYS if k in query] + sorted(k for k in query
                                                             if k not in SHELL_KEYS)
    pairs = [(key, value) for key in ordered for value in query[key]]
    return "?" + urlencode(pairs, safe="/:") if pairs else ""


def updated(query: Mapping[str, Iterable[str]], **values) -> Query:
    """A copy of ``query`` with keys replaced; ``None``, ``""`` or an empty list removes one."""
    result = {key: list(v) for key, v in query.items()}
    for key, value in values.items():
        if value is None or value == "" or (isinstance(value, list | tuple) and not value):
            result.pop(key, None)
        elif isinstance(value, list | tuple):
            result[key] = [str(v) for v in value]
        else:
            result[key] = [str(value)]
    return result


def changed_search(new: Mapping[str, Iterable[str]], search: str | None) -> str | None:
    """The search string of ``new`` if it means something else than ``search``, else
    None: a control reporting the value the URL already holds adds no history entry."""
    new = {key: list(values) for key, values in new.items()}
    return None if new == parse_search(search) else encode(new)


# The historical page's filter of one dimension: ``filter=referrer:news.example`` (the
# dimension, a colon, the value as counted; the value may hold colons). ``bots=1``
# includes bots, ``assets=1`` keeps static files in the top pages.
FILTER_KEY, BOTS_KEY, ASSETS_KEY = "filter", "bots", "assets"


def filter_pair(query: Mapping[str, list[str]]) -> tuple[str, str] | None:
    """The URL's filter as ``(dimension, value)``, unvalidated; None when there is none.
    A value without a colon is ``(text, "")``, which validation then refuses."""
    raw = first(query, FILTER_KEY)
    if raw is None:
        return None
    by, _, value = raw.partition(":")
    return by, value


def first(query: Mapping[str, list[str]], key: str, default: str | None = None) -> str | None:
    values = query.get(key) or []
    return values[0] if values and values[0] != "" else default


def choice(query: Mapping[str, list[str]], key: str, allowed: Iterable[str], default: str) -> str:
    value = first(query, key)
    return value if value in tuple(allowed) else default


@dataclass(frozen=True)
class ShellState:
    """What every page is about: which site, which pages (empty = whole site), which time
    zone, which theme. ``site`` is ``None`` when the URL names none: the default site is
    resolved against the store by the caller."""

    site: str | None
    pages: tuple[str, ...]
    tz: str
    theme: str

    @classmethod
    def from_query(cls, query: Mapping[str, list[str]]) -> ShellState:
        pages = tuple(dict.fromkeys(p for p in query.get("page", []) if p))[:MAX_PAGES]
        return cls(site=first(query, "site"), pages=pages,
                   tz=first(query, "tz", DEFAULT_TZ),
                   theme=choice(query, "theme", THEMES, THEMES[0]))


def shell_search(query: Mapping[str, list[str]]) -> str:
    """Only the shell's keys of ``query``: what navigation to another page keeps."""
    return encode({k: v for k, v in query.items() if k in SHELL_KEYS})
