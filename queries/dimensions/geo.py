"""Country of a client address, offline, from the database the ``iptocc`` package ships
(RIR delegation files compiled into the wheel, ~1.8 MB, no download at run time).

Host names, private, loopback, link-local and reserved addresses, and anything that is
not an IP address are ``unknown``.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache

import iptocc

UNKNOWN = "unknown"


@lru_cache(maxsize=262_144)
def country(address: str | None) -> str:
    """ISO 3166 alpha-2 code (``FR``) or ``unknown``."""
    if not address:
        return UNKNOWN
    text = address.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    try:
        ip = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return UNKNOWN                      # a host name (HostnameLookups on) or junk
    if not ip.is_global:
        return UNKNOWN
    try:
        code = iptocc.country_code(str(ip))
    except (ValueError, TypeError):
        return UNKNOWN
    return code.upper() if code else UNKNOWN
