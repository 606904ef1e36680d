"""Which web origins may send ``/hit`` beacons, and the CORS headers that say so.

``HITBOARD_BEACON_SITES`` is a comma-separated list of entries, each ``site`` or
``site=origin``:

- ``blog.example.com``: the site is named after its host, as Plausible names sites by
  domain. Pages served from ``http(s)://blog.example.com`` or ``http(s)://www.blog.example.com``
  (any port) may send its hits.
- ``blog=https://blog.example.com``: the site ``blog`` accepts exactly that origin
  (scheme, host and port). Repeat the entry for more origins of one site.

Unset, every origin may send hits for every valid site (the server is open). Set, a
browser request carrying an ``Origin`` must come from one of its site's origins (else
403), and a CORS preflight from an origin no listed site has is refused.

Browsers send ``navigator.sendBeacon`` with credentials, so the answer names the origin
(``Access-Control-Allow-Origin: <origin>`` with ``-Allow-Credentials: true``): a ``*``
is not accepted for credentialed requests, and a JSON Blob beacon would never be sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from queries import validation
from queries.errors import HitboardError
from queries.validation import origin as normalise_origin

ALLOW_METHODS = "GET, POST, HEAD, OPTIONS"
ALLOW_HEADERS = "Content-Type"
MAX_AGE = "86400"


@dataclass(frozen=True)
class OriginPolicy:
    """``sites`` None: any site from any origin; else site → exact origins (may be
    empty) and the sites named after their host."""

    sites: dict[str, frozenset[str]] | None

    @property
    def allowed_sites(self) -> frozenset[str] | None:
        return None if self.sites is None else frozenset(self.sites)

    def site_accepts(self, site: str, origin: str) -> bool:
        if self.sites is None:
            return True
        if site not in self.sites:
            return False
        normal = normalise_origin(origin)
        if normal is None:
            return False
        if normal in self.sites[site]:
            return True
        host = urlsplit(normal).hostname or ""
        return host in (site.lower(), f"www.{site.lower()}")

    def any_site_accepts(self, origin: str) -> bool:
        return self.sites is None or any(self.site_accepts(s, origin) for s in self.sites)


def parse_policy(setting: str | None) -> OriginPolicy:
    """The policy of a ``beacon_sites`` setting; a malformed entry is an error at start."""
    if not setting or not setting.strip():
        return OriginPolicy(None)
    sites: dict[str, set[str]] = {}
    for entry in (e.strip() for e in setting.split(",")):
        if not entry:
            continue
        name, _, origin = entry.partition("=")
        site = validation.site(name.strip())
        origins = sites.setdefault(site, set())
        if origin.strip():
            normal = normalise_origin(origin.strip())
            if normal is None:
                raise HitboardError(f"beacon_sites: {origin.strip()!r} is not an origin "
                                    "(write scheme://host[:port], e.g. https://blog.example.com)")
            origins.add(normal)
    return OriginPolicy({site: frozenset(o) for site, o in sites.items()})


def cors_headers(origin: str | None, preflight: bool = False) -> dict[str, str]:
    """Headers letting ``origin`` read the answer (or send the request, for a preflight)."""
    if not origin:
        return {"Access-Control-Allow-Origin": "*"}
    headers = {"Access-Control-Allow-Origin": origin, "Access-Control-Allow-Credentials": "true",
               "Vary": "Origin"}
    if preflight:
        headers.update({"Access-Control-Allow-Methods": ALLOW_METHODS,
                        "Access-Control-Allow-Headers": ALLOW_HEADERS,
                        "Access-Control-Max-Age": MAX_AGE})
    return headers
