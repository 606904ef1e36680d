"""Plausible dimensions for synthetic hits: a seeded population of visitors (browser,
country; a few return often, most rarely: Zipf), a bot share, a referrer mix, UTM
campaigns and status codes. Hits come in visits of a few views (``VIEWS_PER_VISIT`` on
average), which run on from page to page and from one call to the next, so a visitor
views several pages, arrives from one referrer and moves on from the site itself. Each
piece of a visit on one page (a :class:`Visit`) is a row of the count step
(:func:`visit_rows`, ``queries.counting.count``) and is handed to the raw events
(``events.EventFeed``), so the same hit is the same request in both: same agent (bot or
human), referrer, campaign, status and client, and so the same visitor (address, agent)
for the sketches and for the events.

Clients come from the documentation address ranges (RFC 3849 for the population, one
address each; RFC 5737 for the bots), so no real host is named; a visitor's country is
drawn, not looked up (the events, which keep no country, show documentation addresses
as ``unknown``).
"""

from __future__ import annotations

import datetime as dt
from typing import NamedTuple

import numpy as np
import polars as pl

POPULATION = 200_000
ZIPF_S = 0.7
VIEWS_PER_VISIT = 4.0     # mean hits of a visit (geometric): what History's KPI shows
# At most this many new visits a call (a backfilled site-day, a tick's page): past it
# visits grow longer, so a backfill at thousands of hits/s stays seconds, not hours.
MAX_VISITS = 12_000
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


class _Visitor(NamedTuple):
    """Who makes a visit, and where from: its landing page's referrer and campaign,
    its later pages' referrer (the site itself; a bot's stays ``-``)."""

    agent: str
    host: str
    country: str
    referrer: str
    moving_on: str
    query: str

    def visit(self, share: int, status: int, landing: bool) -> Visit:
        if landing:
            return Visit(share, self.agent, self.host, self.country, self.referrer,
                         self.query, status)
        return Visit(share, self.agent, self.host, self.country, self.moving_on, "", status)


def person_host(person: int) -> str:
    return f"2001:db8::{person + 1:x}"


def bot_host(index: int) -> str:
    return f"{('192.0.2', '198.51.100', '203.0.113')[index % 3]}.{index // 3 + 1}"


class SyntheticVisitors:
    """``draw_many(site, counts)`` cuts cells of hits into visits (:func:`visit_rows`
    makes them the count step's rows). Draws are numpy's, a whole batch of cells at a
    time: a backfilled day is tens of thousands of visits. Same seed, same calls, same
    visits."""

    def __init__(self, seed: int = 0):
        rng = self._rng = np.random.default_rng([seed, 3])
        self._agents = _pick(rng, AGENTS, POPULATION)
        self._countries = _pick(rng, COUNTRIES, POPULATION)
        self._hosts = [person_host(person) for person in range(POPULATION)]
        zipf = np.cumsum(1.0 / np.arange(1, POPULATION + 1) ** ZIPF_S)
        self._people = zipf / zipf[-1]
        self._bots = [(agent, bot_host(i)) for i, agent in enumerate(_pick(rng, BOTS, 200))]
        self._tables = [_table(t) for t in (REFERRERS, CAMPAIGNS, STATUSES)]
        self._open: dict[str, tuple[_Visitor, int]] = {}   # site -> visit going on, hits left

    def draw(self, site: str, n: int) -> list[Visit]:
        """The visits of ``n`` hits on one page."""
        return self.draw_many(site, [n])[0]

    def draw_many(self, site: str, counts) -> list[list[Visit]]:
        """The visits of each cell of ``counts`` hits, cells taken in order: the hits
        are cut into visits of 1, 2, 3... views (geometric, ``VIEWS_PER_VISIT`` on
        average), so a visit reaching a cell's end goes on in the next cell, on its
        next page, or in the next call. Each visit is a person (Zipf: a few return
        often) or, one in ``1 / BOT_SHARE``, a bot; it arrives from a drawn referrer
        and campaign, and its later pages from the site itself."""
        counts = np.asarray(counts, dtype=np.int64)
        cell_ends = np.cumsum(counts)
        total = int(cell_ends[-1]) if len(counts) else 0
        if total == 0:
            return [[] for _ in range(len(counts))]
        going, left = self._open.pop(site, (None, 0))
        carried = min(left, total)
        sizes = self._sizes(total - carried)
        visit_ends = np.cumsum(np.concatenate(([carried] if going is not None else [], sizes)),
                               dtype=np.int64)
        if visit_ends.size and visit_ends[-1] > total:
            left_over = int(visit_ends[-1]) - total
        else:
            left_over = left - carried
        bounds = np.union1d(cell_ends, np.minimum(visit_ends, total))
        bounds = bounds[bounds > 0]
        starts = np.concatenate(([0], bounds[:-1]))
        cell_of = np.searchsorted(cell_ends, starts, side="right")
        visit_of = np.searchsorted(visit_ends, starts, side="right")
        landing = np.concatenate(([going is None], visit_of[1:] != visit_of[:-1]))
        visitors = ([going] if going is not None else []) + self._visitors(site, len(sizes))
        if left_over and visitors:
            self._open[site] = (visitors[-1], left_over)
        statuses = self._tables[2][0]
        status_of = _indices(self._rng, self._tables[2][1], len(starts))
        pieces = [visitors[v].visit(int(size), statuses[s], first) for v, size, s, first in zip(
            visit_of.tolist(), (bounds - starts).tolist(), status_of.tolist(),
            landing.tolist(), strict=True)]
        splits = np.searchsorted(cell_of, np.arange(len(counts) + 1)).tolist()
        return [pieces[a:b] for a, b in zip(splits, splits[1:], strict=False)]

    def _sizes(self, hits: int) -> np.ndarray:
        """Sizes of new visits covering ``hits`` (the last may run past them): about
        ``VIEWS_PER_VISIT`` hits each, more past ``MAX_VISITS`` visits, never more
        than ``MAX_VISITS`` of them."""
        if hits <= 0:
            return np.zeros(0, dtype=np.int64)
        mean = max(VIEWS_PER_VISIT, hits / MAX_VISITS)
        sizes = self._rng.geometric(1 / mean, int(hits / mean) + 8)
        while sizes.sum() < hits:
            sizes = np.concatenate((sizes, self._rng.geometric(1 / mean, 64)))
        sizes = sizes[:int(np.searchsorted(np.cumsum(sizes), hits)) + 1][:MAX_VISITS]
        sizes[-1] += max(hits - int(sizes.sum()), 0)     # the last visit takes the rest
        return sizes

    def _visitors(self, site: str, k: int) -> list[_Visitor]:
        rng = self._rng
        people = _indices(rng, self._people, k).tolist()
        bots = (rng.random(k) < BOT_SHARE).tolist()
        which_bot = rng.integers(len(self._bots), size=k).tolist()
        referrers, campaigns = (_indices(rng, cumulative, k).tolist()
                                for _, cumulative in self._tables[:2])
        (referrer_urls, _), (queries, _) = self._tables[:2]
        own = f"https://{site}/"
        out = []
        for person, bot, robot, referrer, campaign in zip(
                people, bots, which_bot, referrers, campaigns, strict=True):
            if bot:
                agent, host = self._bots[robot]
                out.append(_Visitor(agent, host, "US", "-", "-", ""))
                continue
            url = referrer_urls[referrer]
            out.append(_Visitor(self._agents[person], self._hosts[person],
                                self._countries[person], own if url == "SELF" else url,
                                own, queries[campaign]))
        return out


_ROWS = {"site": pl.String, "page": pl.String, "time": pl.Datetime("us", "UTC"),
         "n": pl.Int64, "user_agent": pl.String, "host": pl.String, "country": pl.String,
         "referrer": pl.String, "query": pl.String, "status": pl.Int64}


def visit_rows(cells: list[tuple[str, str, dt.datetime, list[Visit]]]) -> pl.DataFrame:
    """The visits of ``(site, page, when, visits)`` cells as the count step's rows, a
    row per visit (its hits in ``n``), classified as their raw events will be: the
    visitor is the (address, agent) pair, the drawn country overrides the address's,
    the site is the page's own host."""
    rows = [(site, page, when, *visit) for site, page, when, visits in cells
            for visit in visits]
    columns = zip(*rows, strict=True) if rows else ([] for _ in _ROWS)
    frame = pl.DataFrame(dict(zip(_ROWS, columns, strict=True)), schema=_ROWS)
    return frame.with_columns(pl.col("page").alias("path"), pl.col("site").alias("vhost"))
