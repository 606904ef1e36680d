"""AI crawlers by user agent (GPTBot, ClaudeBot, CCBot, PerplexityBot, Bytespider...):
the entries ``crawler-user-agents`` (monperrus/crawler-user-agents, a maintained list
released monthly) tags ``ai-crawler``, matched as one RE2 alternation. What a log shows
and a JavaScript beacon never sees (the Sources view)."""

from __future__ import annotations

from functools import lru_cache

import re2
from crawleruseragents import CRAWLER_USER_AGENTS_DATA

TAG = "ai-crawler"
_options = re2.Options()
_options.case_sensitive = False
PATTERN = re2.compile("|".join(f"(?:{entry['pattern']})" for entry in CRAWLER_USER_AGENTS_DATA
                               if TAG in (entry.get("tags") or ())), _options)


@lru_cache(maxsize=16_384)
def is_ai_crawler(agent: str | None) -> bool:
    """Whether ``agent`` is an AI crawler's (None, no agent: no)."""
    return bool(agent) and PATTERN.search(agent[:1024]) is not None
