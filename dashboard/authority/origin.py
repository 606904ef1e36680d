"""No cross-site writes: a request that may change state (any method but GET, HEAD and
OPTIONS, to any path but the ``/hit`` beacon, Dash's callbacks included) must be JSON,
and when it says where it comes from (``Origin``, ``Sec-Fetch-Site``) it must come from
this server: the request's own scheme and host, or ``public_url``.

Another site's page can post ``text/plain`` or a form here without a CORS preflight
(and the session cookie is ``SameSite=Strict``, so it would go without it): the content
type alone refuses those, and the origin refuses anything from elsewhere whatever its
type, should a route ever accept more. Scripts (curl, a deploy job) send neither header
and pass with their bearer token.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import flask

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
OPEN_PATHS = frozenset({"/hit"})          # strangers' browsers post hits from their sites
OPEN_PREFIXES = ("/unsubscribe/",)        # RFC 8058's form, posted by mail providers
SAME_SITE_FETCH = frozenset({"same-origin", "none"})   # "none": typed or bookmarked


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def own_origins(request: flask.Request, public_url: str | None) -> set[str]:
    origins = {f"{request.scheme}://{request.host}".lower()}
    if public_url:
        origins.add(origin_of(public_url))
    return origins


def write_refusal(request: flask.Request, public_url: str | None) -> tuple[int, str] | None:
    """(status, reason) when ``request`` is a write from elsewhere or not JSON; None
    when it may go on to its route (which checks authority itself)."""
    if (request.method in SAFE_METHODS or request.path in OPEN_PATHS
            or request.path.startswith(OPEN_PREFIXES)):
        return None
    fetch_site = request.headers.get("Sec-Fetch-Site")
    if fetch_site is not None and fetch_site.lower() not in SAME_SITE_FETCH:
        return 403, f"cross-site request refused (Sec-Fetch-Site: {fetch_site[:20]})"
    origin = request.headers.get("Origin")
    if origin is not None and origin.lower() not in own_origins(request, public_url):
        return 403, (f"cross-site request refused: Origin {origin[:100]} is not this "
                     "server's (behind a proxy, set HITBOARD_PUBLIC_URL)")
    if request.mimetype != "application/json":
        return 415, "send JSON, with Content-Type: application/json"
    return None
