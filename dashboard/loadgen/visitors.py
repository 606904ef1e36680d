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
import itertools
import random
from typing import NamedTuple

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


def _pick(rng: random.Random, table, k: int = 1):
    values, weights = zip(*table, strict=True)
    return rng.choices(values, weights=weights, k=k)


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
    """``record(site, page, when, n)`` gives ``n`` synthetic hits their dimensions and
    returns the visits drawn (``draw`` alone draws them without a recorder)."""

    def __init__(self, dimensions, seed: int = 0):
        self.dimensions = dimensions
        rng = self._rng = random.Random(seed * 7919 + 3)
        self._agents = _pick(rng, AGENTS, POPULATION)
        self._countries = _pick(rng, COUNTRIES, POPULATION)
        self._cumulative = list(itertools.accumulate(
            1.0 / (i + 1) ** ZIPF_S for i in range(POPULATION)))
        self._bots = [(agent, bot_host(i)) for i, agent in enumerate(_pick(rng, BOTS, 200))]

    def draw(self, site: str, n: int) -> list[Visit]:
        """``n`` hits as a few visits (at most ``DRAWS_PER_CELL``)."""
        rng = self._rng
        k = min(n, DRAWS_PER_CELL)
        shares = [n // k + (1 if i < n % k else 0) for i in range(k)]
        people = rng.choices(range(POPULATION), cum_weights=self._cumulative, k=k)
        visits = []
        for share, person in zip(shares, people, strict=True):
            if rng.random() < BOT_SHARE:
                agent, host = rng.choice(self._bots)
                country, referrer, query = "US", "-", ""
            else:
                agent, host = self._agents[person], person_host(person)
                country = self._countries[person]
                referrer = _pick(rng, REFERRERS)[0]
                query = _pick(rng, CAMPAIGNS)[0]
            if referrer == "SELF":
                referrer = f"https://{site}/"
            visits.append(Visit(share, agent, host, country, referrer, query,
                                _pick(rng, STATUSES)[0]))
        return visits

    def record(self, site: str, page: str, when: dt.datetime, n: int) -> list[Visit]:
        visits = self.draw(site, n)
        self.record_visits(site, page, when, visits)
        return visits

    def record_visits(self, site: str, page: str, when: dt.datetime,
                      visits: list[Visit]) -> None:
        """The visits' dimensions, classified as their raw events will be (the visitor is
        the (address, agent) pair; the drawn country overrides the address's)."""
        for visit in visits:
            dims = classify(site, page, query=visit.query, status=visit.status,
                            referrer_url=visit.referrer, agent=visit.agent,
                            address=visit.host, country=visit.country, vhost=site)
            self.dimensions.record(site, page, when, dims, visit.share)
