"""Links to the known sites for a page whose URL names a site without statistics."""

from __future__ import annotations

from collections.abc import Iterable

import dash

from components.sitehint import unknown_site

from .state import encode, parse_search, updated


def unknown_site_notice(site: str, known: Iterable[str], path: str, search: str | None):
    """The notice, each known site linked to the same view of that site."""
    query = parse_search(search)
    links = [(name, dash.get_relative_path(path) + encode(updated(query, site=name, page=None)))
             for name in known]
    return unknown_site(site, links)
