"""Raw request events for synthetic hits: one ``events`` document per hit, so the raw
feed and its rollups agree with the pre-aggregated counts.

Given the tick's visits (``visitors.Visit``: what the dimension counters recorded), each
hit's event is that visit's request (agent, client, referrer, campaign, status, and the
drawn country, which its documentation address cannot give), so a hit the counters call
a bot is a bot in the events too. Without them (a caller that draws no
dimensions) the requests are drawn here. Clients come from the documentation address
ranges (RFC 5737, RFC 3849), so no synthetic event names a real host; times are spread
uniformly over the tick the hits belong to.

With a ``custom`` writer, people's pageviews are followed now and then by a custom
event of the same visitor, a few seconds later (``CUSTOM``: an add to cart or a purchase
with its revenue on a product page, a newsletter signup on a post), so the demo's goals
convert; ``history_events`` draws the same for the backfilled history's pageviews.
"""

from __future__ import annotations

import datetime as dt

import numpy as np

from ..dimensions.classify import is_bot_agent
from ..events import custom
from ..visits.sessions import Pageview

HOSTS = [f"{net}.{i}" for net in ("192.0.2", "198.51.100", "203.0.113") for i in range(1, 255)]
AGENTS = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/126.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.5 Safari/605.1.15",
    "Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
)
REFERRERS = ("-", "https://www.google.com/", "https://duckduckgo.com/", "https://news.example/")
# (path prefix, event name, probability per pageview, with a revenue)
CUSTOM = (("/products/", "Add to cart", 0.04, False), ("/products/", "Purchase", 0.012, True),
          ("/blog/", "Newsletter signup", 0.02, False))
STATUSES = np.array([200, 304, 404, 500])
STATUS_P = np.array([0.93, 0.05, 0.015, 0.005])


class EventFeed:
    """Called by the runner with each tick's cells, ``(site, page, n)`` or ``(site, page,
    n, visits)``; adds ``n`` events per cell to an
    :class:`queries.events.writer.EventWriter`-like ``writer`` (``add(doc)``)."""

    def __init__(self, writer, seed: int = 0, custom=None):
        self.writer, self.custom = writer, custom
        self._rng = np.random.default_rng([seed, 2])

    def __call__(self, cells: list[tuple], when: dt.datetime, span_s: float) -> None:
        total = sum(cell[2] for cell in cells)
        rng = self._rng
        offsets = rng.random(total) * span_s
        hosts = rng.integers(len(HOSTS), size=total)
        agents = rng.integers(len(AGENTS), size=total)
        referrers = rng.integers(len(REFERRERS), size=total)
        statuses = rng.choice(STATUSES, size=total, p=STATUS_P)
        sizes = rng.integers(300, 60_000, size=total)
        i = 0
        for site, page, n, *given in cells:
            requests = ([(v.host, v.agent, v.referrer, v.query, v.status, v.country)
                         for v in given[0] for _ in range(v.share)] if given else
                        [(HOSTS[hosts[j]], AGENTS[agents[j]], REFERRERS[referrers[j]], "",
                          int(statuses[j]), None) for j in range(i, i + n)])
            for host, agent, referrer, query, status, country in requests:
                event = {
                    "time": when - dt.timedelta(seconds=float(offsets[i])), "site": site,
                    "host": host, "method": "GET", "path": page, "query": query,
                    "status": int(status), "bytes": int(sizes[i]),
                    "referrer": referrer, "user_agent": agent,
                }
                if country is not None:     # drawn: documentation addresses have none
                    event["country"] = country
                self.writer.add(event)
                if self.custom is not None and status == 200 and not is_bot_agent(agent):
                    self._follow(event, float(offsets[i]))
                i += 1

    def _follow(self, view: dict, before_now: float) -> None:
        """Perhaps a custom event after the pageview ``view`` (``before_now`` seconds
        before the tick's end), never later than the tick."""
        for prefix, name, p, paid in CUSTOM:
            if view["path"].startswith(prefix) and self._rng.random() < p:
                revenue = (("EUR", f"{self._rng.integers(990, 19_900) / 100:.2f}") if paid
                           else None)
                later = view["time"] + dt.timedelta(seconds=min(before_now, 20.0))
                self.custom.add(custom.document(later, view["site"], view["path"],
                                                (name, (), revenue), view["host"],
                                                view["user_agent"]))


def history_events(runs: list[Pageview], rng: np.random.Generator) -> list[Pageview]:
    """The custom events following people's pageviews of the backfilled history, as
    live traffic's (``CUSTOM``'s chances per pageview): each run of ``views`` pageviews
    of a page gets a binomial draw of each event, at times drawn within the run."""
    found = []
    for run in runs:
        for prefix, name, p, paid in CUSTOM:
            if not run.page.startswith(prefix):
                continue
            n = int(rng.binomial(run.views, p))
            if not n:
                continue
            times = rng.integers(run.time, (run.until or run.time) + 1, size=n)
            amounts = rng.integers(990, 19_900, size=n) if paid else None
            for i, at in enumerate(times.tolist()):
                revenue = ("EUR", f"{amounts[i] / 100:.2f}") if paid else None
                found.append(Pageview(run.visitor, at, run.page, views=0,
                                      event=(name, (), revenue)))
    return found
