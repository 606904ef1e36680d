"""One hit's dimensions, from whatever its source knows (a log line, a beacon request,
a synthetic hit). Pure: no database; every piece is cached where inputs repeat."""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from . import agents, assets, geo, referrer
from .encoding import clean

NO_STATUS = "(none)"
BOT, HUMAN = "bot", "human"


class Dimensions(NamedTuple):
    values: tuple[tuple[str, str], ...]    # (dimension, value) pairs, values cleaned
    visitor: str                           # what the visitor sketch hashes; never stored
    bot: bool


@lru_cache(maxsize=4096)
def _own(site: str, vhost: str | None) -> frozenset[str]:
    return referrer.own_hosts(site, vhost)


def classify(site: str, path: str, *, query: str | None = None, status: int | None = None,
             referrer_url: str | None = None, agent: str | None = None,
             address: str | None = None, vhost: str | None = None,
             country: str | None = None, visitor: str | None = None) -> Dimensions:
    """The (dimension, value) pairs of one hit. ``status`` None (a beacon) is
    ``(none)``; 404s also count their path under ``notfound``. ``country`` and
    ``visitor`` override the address-derived ones (synthetic traffic)."""
    ua = agents.parse(agent)
    source, medium, campaign = referrer.utm(query)
    code = NO_STATUS if status is None else str(status)
    values = [
        ("referrer", referrer.referrer_host(referrer_url, _own(site, vhost))),
        ("utm_source", clean(source)), ("utm_medium", clean(medium)),
        ("utm_campaign", clean(campaign)),
        ("status", code), ("browser", clean(ua.browser)), ("os", clean(ua.os)),
        ("device", ua.device), ("country", country or geo.country(address)),
        ("bot", BOT if ua.bot else HUMAN), ("kind", assets.kind(path)),
    ]
    if status == 404:
        values.append(("notfound", clean(path)))
    if visitor is None:
        visitor = f"{address or ''}\x00{agent or ''}"
    return Dimensions(tuple(values), visitor, ua.bot)


def from_record(site: str, record) -> Dimensions:
    """The dimensions of a parsed log line (``queries.logformat.LogRecord``)."""
    return classify(site, record.path, query=record.query, status=record.status,
                    referrer_url=record.referrer, agent=record.user_agent,
                    address=record.host, vhost=record.vhost)
