"""Plausible dimensions for synthetic hits: a seeded population of visitors (browser,
country; a few return often, most rarely: Zipf), a bot share, a referrer mix, UTM
campaigns and status codes. Each draw (a :class:`Visit`) is recorded into a
``DimensionRecorder`` and handed to the raw events (``events.EventFeed``), so the same
hit is the same request in both: same agent (bot or human), referrer, campaign, status
and client, and so the same visitor (address, agent) for the sketches and for the events.

Clients come from the documentation address ranges (RFC 3849 for the population, one
address each; RFC 5737 for the bots), so no real host is named; a visitor's country is
drawn, not looked up (the events, which keep no country, show documentation addresses
as ``unknown``).
"""

from __future__ import annotations

import datetime as dt
from typing import NamedTuple

import numpy as np

from queries.dimensions import classify

POPULATION = 20_000
ZIPF_S = 0.7
DRAWS_PER_CELL = 4        # each (site, page) share of a tick is split over this many visitors
BOT_SHARE = 0.12
AGENTS = (  # (user agent, weight)
    ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/126.0 Safari/537.36", 40),
    ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
     "(KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1", 20),
    ("Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) "
     "Version/17.5 Safari/605.1.15", 10),
    ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/126.0 Mobile Safari/537.36", 10),
    ("Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0", 8),
    ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
     "Chrome/126.0 Safari/537.36 Edg/126.0", 8),
    ("Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
     "Version/17.5 Mobile/15E148 Safari/604.1", 4),
)
BOTS = (
    ("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", 40),
    ("Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", 20),
    ("Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)", 15),
    ("curl/8.5.0", 10), ("python-requests/2.32.3", 10), ("UptimeRobot/2.0", 5),
)
COUNTRIES = (("US", 28), ("DE", 9), ("GB", 8), ("FR", 8), ("IN", 8), ("BR", 6), ("JP", 5),
             ("CA", 5), ("NL", 4), ("ES", 4), ("IT", 4), ("PL", 3), ("AU", 3), ("SE", 2),
             ("unknown", 3))
REFERRERS = (("-", 40), ("https://www.google.com/", 25), ("SELF", 15),
             ("https://news.example/", 5), ("https://t.co/x", 5), ("https://duckduckgo.com/", 4),
             ("https://www.bing.com/", 3), ("https://www.reddit.com/r/web", 3))
CAMPAIGNS = (("", 90), ("utm_source=newsletter&utm_medium=email&utm_campaign=spring-sale", 6),
             ("utm_source=twitter&utm_medium=social&utm_campaign=launch", 4))
STATUSES = ((200, 93), (304, 4), (404, 2), (500, 1))


def _table(table) -> tuple[tuple, np.ndarray]:
    """A ``(value, weight)`` table as its values and cumulative probabilities."""
    values, weights = zip(*table, strict=True)
    cumulative = np.cumsum(weights, dtype=float)
    return values, cumulative / cumulative[-1]


def _pick(rng: np.random.Generator, table, k: int) -> list:
    """``k`` values of ``table`` drawn by weight."""
    values, cumulative = _table(table)
    return [values[i] for i in _indices(rng, cumulative, k).tolist()]


def _indices(rng: np.random.Generator, cumulative: np.ndarray, k: int) -> np.ndarray:
    """``k`` indices drawn by the cumulative probabilities ``cumulative``."""
    return np.searchsorted(cumulative, rng.random(k), side="right")


class Visit(NamedTuple):
    """``share`` hits of one synthetic request: who, from where, answered how."""

    share: int
    agent: str
    host: str
    country: str
    referrer: str
    query: str
    status: int


def person_host(person: int) -> str:
    return f"2001:db8::{person + 1:x}"


def bot_host(index: int) -> str:
    return f"{('192.0.2', '198.51.100', '203.0.113')[index % 3]}.{index // 3 + 1}"


class SyntheticVisitors:
    """``draw(site, n)`` gives ``n`` synthetic hits a few visits, and ``record_visits``
    counts them into the dimension recorder. Draws are
    numpy's, a whole batch of cells at a time (``draw_many``): a backfilled day of a
    thousand pages is ~100,000 visits. Same seed, same visits."""

    def __init__(self, dimensions, seed: int = 0):
        self.dimensions = dimensions
        rng = self._rng = np.random.default_rng([seed, 3])
        self._agents = _pick(rng, AGENTS, POPULATION)
        self._countries = _pick(rng, COUNTRIES, POPULATION)
        self._hosts = [person_host(person) for person in range(POPULATION)]
        zipf = np.cumsum(1.0 / np.arange(1, POPULATION + 1) ** ZIPF_S)
        self._people = zipf / zipf[-1]
        self._bots = [(agent, bot_host(i)) for i, agent in enumerate(_pick(rng, BOTS, 200))]
        self._tables = [_table(t) for t in (REFERRERS, CAMPAIGNS, STATUSES)]

    def draw(self, site: str, n: int) -> list[Visit]:
        """``n`` hits as a few visits (at most ``DRAWS_PER_CELL``)."""
        return self.draw_many(site, [n])[0]

    def draw_many(self, site: str, counts) -> list[list[Visit]]:
        """The visits of each cell of ``counts`` hits: at most ``DRAWS_PER_CELL`` a cell,
        sharing its hits as evenly as they can; each a person (Zipf: a few return often)
        or, one in ``1 / BOT_SHARE``, a bot."""
        counts = np.asarray(counts, dtype=np.int64)
        per_cell = np.minimum(counts, DRAWS_PER_CELL)
        ends = np.cumsum(per_cell)
        cell = np.repeat(np.arange(len(counts)), per_cell)
        slot = np.arange(len(cell)) - (ends - per_cell)[cell]
        shares = counts[cell] // per_cell[cell] + (slot < counts[cell] % per_cell[cell])
        rng, k = self._rng, len(cell)
        people = _indices(rng, self._people, k)
        bots = rng.random(k) < BOT_SHARE
        which_bot = rng.integers(len(self._bots), size=k)
        picks = [_indices(rng, cumulative, k) for _, cumulative in self._tables]
        visits = [self._visit(site, *drawn) for drawn in zip(
            shares.tolist(), people.tolist(), bots.tolist(), which_bot.tolist(),
            *(p.tolist() for p in picks), strict=True)]
        return [visits[a:b] for a, b in zip((ends - per_cell).tolist(), ends.tolist(),
                                            strict=True)]

    def _visit(self, site: str, share: int, person: int, bot: bool, which_bot: int,
               referrer: int, campaign: int, status: int) -> Visit:
        (referrers, _), (campaigns, _), (statuses, _) = self._tables
        if bot:
            agent, host = self._bots[which_bot]
            return Visit(share, agent, host, "US", "-", "", statuses[status])
        url = referrers[referrer]
        return Visit(share, self._agents[person], self._hosts[person], self._countries[person],
                     f"https://{site}/" if url == "SELF" else url, campaigns[campaign],
                     statuses[status])

    def record_visits(self, site: str, page: str, when: dt.datetime,
                      visits: list[Visit]) -> None:
        """The visits' dimensions, classified as their raw events will be (the visitor is
        the (address, agent) pair; the drawn country overrides the address's)."""
        for visit in visits:
            dims = classify(site, page, query=visit.query, status=visit.status,
                            referrer_url=visit.referrer, agent=visit.agent,
                            address=visit.host, country=visit.country, vhost=site)
            self.dimensions.record(site, page, when, dims, visit.share)
