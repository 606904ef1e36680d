"""One hit's dimensions, from whatever its source knows (a log line, a beacon request,
a synthetic hit). Pure: no database; every piece is cached where inputs repeat."""

from __future__ import annotations

from functools import lru_cache
from itertools import chain
from typing import NamedTuple

from . import agents, assets, geo, referrer
from .encoding import clean

NO_STATUS = "(none)"
BOT, HUMAN = "bot", "human"


class Dimensions(NamedTuple):
    values: tuple[tuple[str, str], ...]    # (dimension, value) pairs, values cleaned
    visitor: str                           # what the visitor sketch hashes; never stored
    bot: bool


# Cache keys are cut (agents and referrers to 1 KB), so a flood of huge random values
# cannot hold more than a few tens of MB.
@lru_cache(maxsize=16_384)
def _referrer(url: str | None, site: str, vhost: str | None) -> tuple:
    return (("referrer", referrer.referrer_host(url, referrer.own_hosts(site, vhost))),)


@lru_cache(maxsize=65_536)
def _agent(agent: str | None) -> tuple[tuple, bool]:
    ua = agents.parse(agent)
    return ((("browser", clean(ua.browser)), ("os", clean(ua.os)), ("device", ua.device),
             ("bot", BOT if ua.bot else HUMAN)), ua.bot)




@lru_cache(maxsize=65_536)
def _country(address: str | None) -> tuple:
    return (("country", geo.country(address)),)


@lru_cache(maxsize=16_384)
def _request(path: str, status: int | None) -> tuple:
    """Status, kind, the page and, for a 404, the page again as not found: one cached
    call per hit. The page as a dimension gives the pages panel what the hit counters
    (``stats.*``) cannot: bots apart, and visitors per page."""
    page = clean(path)
    pairs = (("status", NO_STATUS if status is None else str(status)),
             ("kind", assets.kind(path)), ("page", page))
    return (*pairs, ("notfound", page)) if status == 404 else pairs


# A hit without an agent where the site counts such hits as bots (``unknown_bots``).
_UNKNOWN_BOT = ((("browser", agents.OTHER), ("os", agents.OTHER), ("device", agents.BOT),
                 ("bot", BOT)), True)


def _agent_of(agent: str | None, unknown_bots: bool) -> tuple[tuple, bool]:
    """The agent's pairs and bot flag; a missing agent is a person's unless
    ``unknown_bots`` (GoAccess's ``--unknowns-as-crawlers``)."""
    if unknown_bots and agents.is_unknown(agent):
        return _UNKNOWN_BOT
    return _agent(agent[:agents.MAX_PARSED] if agent else agent)


def is_bot_agent(agent: str | None, unknown_bots: bool = False) -> bool:
    """Whether this user agent is a bot (cached, as in ``classify``)."""
    return _agent_of(agent, unknown_bots)[1]


_NO_UTM = tuple((name, referrer.NONE) for name in referrer.UTM_FIELDS)


def _utm(query: str | None) -> tuple:
    if not query or "utm_" not in query:
        return _NO_UTM
    return _campaign(query) if len(query) <= 1024 else _parsed_utm(query)


@lru_cache(maxsize=4_096)
def _campaign(query: str) -> tuple:
    """A campaign's query string recurs on every hit it brought (parsing costs ~30 µs)."""
    return _parsed_utm(query)


def _parsed_utm(query: str) -> tuple:
    return tuple(zip(referrer.UTM_FIELDS, map(clean, referrer.utm(query)), strict=True))


def classify(site: str, path: str, *, query: str | None = None, status: int | None = None,
             referrer_url: str | None = None, agent: str | None = None,
             address: str | None = None, vhost: str | None = None,
             country: str | None = None, visitor: str | None = None,
             unknown_bots: bool = False) -> Dimensions:
    """The (dimension, value) pairs of one hit. ``status`` None (a beacon) is
    ``(none)``; 404s also count their path under ``notfound``. ``country`` and
    ``visitor`` override the address-derived ones (synthetic traffic); a hit without an
    agent is a bot only if ``unknown_bots``. Each part is cached: agents, referrers,
    addresses and paths repeat."""
    return _classify(site, path, query, status, referrer_url, agent, address, vhost,
                     country, visitor, unknown_bots)


_new = tuple.__new__   # a NamedTuple without its Python-level __new__ (hot path)


def _classify(site, path, query, status, referrer_url, agent, address, vhost, country,
              visitor, unknown_bots=False) -> Dimensions:
    agent_pairs, bot = _agent_of(agent, unknown_bots)
    ref = referrer_url[:1024] if referrer_url else referrer_url
    where = _country(address) if country is None else (("country", clean(country)),)
    values = (*_referrer(ref, site, vhost), *_utm(query), *agent_pairs, *where,
              *_request(path, status))
    if visitor is None:
        visitor = f"{address or ''}\x00{agent or ''}"
    return _new(Dimensions, (values, visitor, bot))


class RecordCoder:
    """The dimensions of parsed log lines (``queries.ingest.logformat.LogRecord``) as keys
    of five small integers, one per part (referrer, campaign, agent, country, request),
    each part classified once per distinct input. A tally of many lines then hashes five
    ints per hit where it would hash ten (dimension, value) pairs, and joins the pairs
    once per distinct key (:meth:`values`): what ``classify`` gives, for a fraction of
    the cost per line. Its tables grow with the distinct inputs it sees: a mapper keeps
    one until it is ``full``, then starts another."""

    MAX_ENTRIES = 200_000     # inputs, parts and values tuples held before ``full``
    # A key's parts, in order, with the columns of a line each is classified from.
    PARTS = {"referrer": ("referrer", "site", "vhost"), "campaign": ("query",),
             "agent": ("user_agent",), "country": ("host",), "request": ("path", "status")}

    def __init__(self, unknown_bots: bool = False):
        self._numbers: dict[tuple, int] = {}
        self._parts: list[tuple] = []
        self._tables = {
            "referrer": _Numbered(self, lambda given: _referrer(
                given[0][:1024] if given[0] else given[0], given[1], given[2])),
            "campaign": _Numbered(self, _utm),
            "agent": _Numbered(self, lambda agent: _agent_of(agent, unknown_bots)[0]),
            "country": _Numbered(self, _country),
            "drawn": _Numbered(self, _drawn_country),
            "request": _Numbered(self, lambda given: _request(*given)),
        }
        self._values = _Values(self._parts)

    def numbering(self, part: str):
        """A function from the inputs of ``part`` (one of :attr:`PARTS`, its input
        columns as arguments) to the number of what they give, classified on first
        sight: the frame of a chunk's lines calls it once per distinct input.
        ``drawn``, the country part of hits that may name their country, takes
        ``(host, country)``."""
        table = self._tables[part]
        if part != "drawn" and len(self.PARTS[part]) == 1:
            return table.__getitem__
        return lambda *given: table[given]

    @property
    def full(self) -> bool:
        tables = (*self._tables.values(), self._numbers, self._values)
        return sum(map(len, tables)) >= self.MAX_ENTRIES

    @property
    def values(self):
        """A function from a key to its (dimension, value) pairs: ``Dimensions.values``
        (a dictionary's look-up, in C once the key has been seen)."""
        return self._values.__getitem__

    def number(self, part: tuple) -> int:
        number = self._numbers.get(part)
        if number is None:
            number = self._numbers[part] = len(self._parts)
            self._parts.append(part)
        return number


def _drawn_country(given: tuple[str | None, str | None]) -> tuple:
    """A country given with the hit (synthetic traffic), else its address's."""
    address, country = given
    return _country(address) if country is None else (("country", clean(country)),)


class _Numbered(dict):
    """Input -> the number of the part it gives, classified on first sight."""

    def __init__(self, coder: RecordCoder, part):
        super().__init__()
        self.coder, self.part = coder, part

    def __missing__(self, given):
        number = self[given] = self.coder.number(self.part(given))
        return number


class _Values(dict):
    """Key -> its (dimension, value) pairs, joined from its parts on first sight."""

    def __init__(self, parts: list[tuple]):
        super().__init__()
        self.parts = parts

    def __missing__(self, key: tuple[int, ...]) -> tuple:
        values = self[key] = tuple(chain.from_iterable(map(self.parts.__getitem__, key)))
        return values
