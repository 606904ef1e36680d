"""Where a hit came from: the referrer's host and the UTM tags of the page's query string.

A referrer is whatever the client sent, so anything may arrive: no referrer ("-", empty)
is ``(direct)``, the site's own host ``(internal)``, a value that is not an absolute
http(s) URL with a host ``(invalid)``; never an exception. A source that does not
record referrers at all (a common-format log has no such field) gives ``NOT_LOGGED``:
its hits' referrers are unknown, which is not direct.
"""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import parse_qs, urlsplit

DIRECT, INTERNAL, INVALID, NONE = "(direct)", "(internal)", "(invalid)", "(none)"
NOT_LOGGED = "(not in the log)"  # a hit's referrer when its source has no referrer field
UTM_FIELDS = ("utm_source", "utm_medium", "utm_campaign")
MAX_UTM = 200
MAX_QUERY = 4096


def _bare(host: str) -> str:
    host = host.lower().rstrip(".")
    return host[4:] if host.startswith("www.") else host


@lru_cache(maxsize=16_384)
def referrer_host(referrer: str | None, own_hosts: frozenset[str] = frozenset()) -> str:
    """The referring host, lower case, ``www.`` kept (it is what users recognise);
    ``own_hosts`` (compared without ``www.``) are the site itself; ``NOT_LOGGED`` as
    it is."""
    if referrer is None:
        return DIRECT
    if referrer == NOT_LOGGED:
        return NOT_LOGGED
    referrer = referrer.strip()
    if referrer in ("", "-"):
        return DIRECT
    try:
        parts = urlsplit(referrer[:2048])
        host = parts.hostname
    except ValueError:
        return INVALID
    if parts.scheme.lower() not in ("http", "https", "android-app") or not host:
        return INVALID
    host = host.rstrip(".")
    if _bare(host) in own_hosts:
        return INTERNAL
    return host


def own_hosts(*names: str | None) -> frozenset[str]:
    """The hosts that count as the site itself (``www.`` dropped), from site names and
    virtual hosts that look like host names."""
    return frozenset(_bare(n) for n in names if n and "." in n)


def utm(query: str | None) -> tuple[str, str, str]:
    """(source, medium, campaign) from a query string; ``(none)`` where absent. Values
    are kept as sent (``$`` and ``.`` included: they are stored escaped), cut to
    ``MAX_UTM`` characters."""
    if not query or "utm_" not in query:
        return NONE, NONE, NONE
    try:
        args = parse_qs(query[:MAX_QUERY], keep_blank_values=False)
    except ValueError:
        return NONE, NONE, NONE
    out = []
    for name in UTM_FIELDS:
        values = args.get(name)
        value = values[0].strip() if values else ""
        out.append(value[:MAX_UTM] if value else NONE)
    return out[0], out[1], out[2]
