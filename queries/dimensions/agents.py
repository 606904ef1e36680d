"""Browser, OS, device type and bot-or-human from a user agent, offline.

Parsing: ``ua-parser`` with its ``ua-parser-builtins`` rules (uap-core, updated monthly)
and the ``ua-parser-rs`` regex engine (~65 µs per agent against ~1.8 ms for its pure
Python engine; ``device-detector`` took ~57 ms, see bench/dimensions.py). Bots:
``crawlerdetect``'s maintained crawler list (matched by :class:`CrawlerList`),
ua-parser's ``Spider`` device, plus the obvious non-browser clients (curl, HTTP
libraries, uptime monitors). A hit without an agent (a common-format log has none) is a
person of an ``unknown`` device unless the site counts unknown agents as bots
(GoAccess's ``--unknowns-as-crawlers``; see ``classify``).
Agents repeat (558 distinct in the 10,000 lines of the shared log), so each distinct
agent is parsed once: an LRU cache of ``CACHE_SIZE`` agents.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from typing import NamedTuple

import re2
from crawlerdetect.providers.crawlers import data as CRAWLERS
from crawlerdetect.providers.exclusions import data as EXCLUSIONS
from ua_parser import BestAvailableResolver, Parser, load_lazy_builtins

CACHE_SIZE = 16_384
MAX_PARSED = 1024          # longer agents are parsed on their first 1 KB
OTHER = "Other"
DESKTOP, MOBILE, TABLET, BOT = "desktop", "mobile", "tablet", "bot"
UNKNOWN = "unknown"        # the device of a hit without a user agent
HUMAN = "human"


def _caseless(pattern: str):
    """``pattern`` compiled by RE2, case ignored: an alternation runs as one automaton
    (Python's ``re`` tries each branch at each position: ~37 µs an agent against ~3.5
    for ``NON_BROWSER``)."""
    options = re2.Options()
    options.case_sensitive = False
    return re2.compile(pattern, options)


NON_BROWSER = _caseless(
    r"curl|wget|python-requests|python-urllib|python/|aiohttp|httpx|go-http-client|"
    r"okhttp|java/|apache-httpclient|libwww-perl|lwp::|pycurl|node-fetch|axios|undici|"
    r"headlesschrome|phantomjs|httpie|postmanruntime|insomnia|guzzle|ruby|"
    r"uptimerobot|pingdom|statuscake|site24x7|datadog|newrelic|monitor|check_http|"
    r"nagios|zabbix|prometheus|blackbox|kube-probe|elb-healthchecker|googlehc|"
    r"health.?check|scan|feed|rss|fetch|slurp|archiver|indexer|validator|preview")
_TABLET = _caseless(r"ipad|tablet|kindle|silk/|playbook|nexus (7|9|10)|sm-t\d")
_MOBILE = _caseless(r"mobi|iphone|ipod|android.*mobile|windows phone|blackberry|opera mini")


class Agent(NamedTuple):
    browser: str
    os: str
    device: str
    bot: bool


class CrawlerList:
    """crawlerdetect's test, on its own lists: the browser tokens of its exclusions are
    removed, and an agent with anything left that matches a crawler pattern is a bot.
    crawlerdetect matches its ~1,460 patterns as one alternation with Python's ``re``,
    which tries each in turn at every position (~300 µs an agent, and ~70 ms to
    compile in each ingest worker); RE2 (``google-re2``) runs that alternation as an
    automaton (~20 µs an agent with the exclusions, 8 ms to compile). Patterns with a
    ``(?`` group, which RE2 may not run (lookarounds: one today), stay with ``re``, as
    do the exclusions, whose ``re.sub`` is quicker than RE2's."""

    def __init__(self, crawlers=CRAWLERS, exclusions=EXCLUSIONS):
        self._crawlers = _caseless("|".join(p for p in crawlers if "(?" not in p))
        others = [p for p in crawlers if "(?" in p]
        self._others = re.compile("|".join(others), re.IGNORECASE) if others else None
        self._exclusions = re.compile("|".join(exclusions), re.IGNORECASE)

    def is_crawler(self, agent: str) -> bool:
        rest = self._exclusions.sub("", agent.strip())
        if not rest:
            return False
        return (self._crawlers.search(rest) is not None
                or (self._others is not None and self._others.search(rest) is not None))


@cache
def _parser() -> Parser:
    """Built on first use (~0.1 s: the Rust engine compiles the rules), so commands that
    classify nothing, such as ``hitboard report``, never pay for it. The rules load as
    lazy matchers: the eager ones would compile each of their ~1,260 regexes with
    Python's ``re`` too (0.4 s in every ingest worker), which the Rust engine never
    uses."""
    return Parser(BestAvailableResolver(load_lazy_builtins()))


@cache
def _crawlers() -> CrawlerList:
    return CrawlerList()


def prepare() -> None:
    """Build the parser and the crawler list now (~0.12 s) rather than for the first
    agent: an ingest worker process does it as it starts, while the ingest process
    opens the store."""
    _parser()
    _crawlers()


def is_bot(agent: str | None) -> bool:
    return parse(agent).bot


def is_unknown(agent: str | None) -> bool:
    """A hit that names no agent: none, empty, blank or ``-``."""
    return not agent or not agent.strip() or agent.strip() == "-"


@lru_cache(maxsize=CACHE_SIZE)
def _parse(agent: str) -> Agent:
    if not agent or agent == "-":
        return Agent(OTHER, OTHER, UNKNOWN, False)
    result = _parser().parse(agent)
    browser = result.user_agent.family if result.user_agent else OTHER
    os_name = result.os.family if result.os else OTHER
    family = result.device.family if result.device else OTHER
    # The cheap tests first, the crawler list only when they say no (the same answer:
    # any of the three makes a bot).
    bot = (family == "Spider" or NON_BROWSER.search(agent) is not None
           or _crawlers().is_crawler(agent))
    if bot:
        device = BOT
    elif _TABLET.search(agent) or ("android" in agent.lower() and "mobile" not in agent.lower()):
        device = TABLET
    elif _MOBILE.search(agent) or os_name in ("iOS", "Android", "Windows Phone"):
        device = MOBILE
    else:
        device = DESKTOP
    return Agent(browser, os_name, device, bot)


def parse(agent: str | None) -> Agent:
    """The agent's browser family, OS family, device type and whether it is a bot."""
    return _parse((agent or "").strip()[:MAX_PARSED])


def cache_info():
    return _parse.cache_info()


def clear_cache() -> None:
    _parse.cache_clear()
