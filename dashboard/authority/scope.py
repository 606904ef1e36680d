"""A viewer meets only its sites: wherever a site name comes from a request (the URL,
a control, a callback posted directly, the API), it passes :func:`check_site`, and
lists of sites pass :func:`visible`. A site not the principal's is a 403 that does not
say whether the site exists."""

from __future__ import annotations

from collections.abc import Iterable

import flask

from .principal import who

REFUSED = "You may not read this site."


class SiteRefused(Exception):
    """A site the current principal may not read (not a HitboardError: no page shows it
    as bad input; the request as a whole is refused)."""

    def __init__(self) -> None:
        super().__init__(REFUSED)


def check_site(site: str | None) -> str | None:
    if site is not None and not who().sees(site):
        raise SiteRefused()
    return site


def visible(names: Iterable[str]) -> list[str]:
    principal = who()
    return [name for name in names if principal.sees(name)]


def sees_all() -> bool:
    return who().sites is None


def check_all_sites() -> None:
    """For what shows the whole store (its collections, logs, shard plan): a viewer of
    some sites only is refused."""
    if not sees_all():
        raise SiteRefused()


def install_scope(server: flask.Flask) -> None:
    server.register_error_handler(SiteRefused, _refused)


def _refused(_exc: SiteRefused) -> flask.Response:
    response = flask.jsonify(error=REFUSED)
    response.status_code = 403
    return response
