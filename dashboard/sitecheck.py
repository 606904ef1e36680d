"""Where a page sends the reader whose view shows nothing: the known sites, for a URL
naming a site without statistics; the site's own days, for a range without its hits."""

from __future__ import annotations

from collections.abc import Iterable

import dash

from components.sitehint import elsewhere, unknown_site
from queries import validation

from .state import encode, parse_search, updated


def unknown_site_notice(site: str, known: Iterable[str], path: str, search: str | None):
    """The notice, each known site linked to the same view of that site."""
    query = parse_search(search)
    links = [(name, dash.get_relative_path(path) + encode(updated(query, site=name, page=None)))
             for name in known]
    return unknown_site(site, links)


def elsewhere_notice(span, tz: str, path: str, search: str | None):
    """The days holding the site's hits (``span``: its first and last hits), and a link
    to all of them (the ``all`` range, no custom dates)."""
    zone = validation.timezone(tz)
    first, last = (day.astimezone(zone).date().isoformat() for day in span)
    query = updated(parse_search(search), range="all", start=None, end=None, gran=None)
    return elsewhere(first, last, dash.get_relative_path(path) + encode(query))
