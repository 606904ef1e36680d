"""What a page says when the URL names a site with no statistics: which sites exist."""

from __future__ import annotations

from collections.abc import Sequence

from dash import dcc, html

MAX_LISTED = 20


def unknown_site(site: str, known: Sequence[tuple[str, str]]) -> html.Div:
    """``known``: (site, href) pairs, one link per known site (at most ``MAX_LISTED``)."""
    if not known:
        return html.Div(f"Site {site!r} has no data, and no site has any yet.",
                        className="notice notice-warning", role="alert")
    links = []
    for name, href in known[:MAX_LISTED]:
        links += [dcc.Link(name, href=href, className="site-link"), " "]
    more = f" and {len(known) - MAX_LISTED} more" if len(known) > MAX_LISTED else ""
    return html.Div(className="notice notice-warning", role="alert", id="unknown-site",
                    children=[html.Span(f"Site {site!r} has no data. Known sites: "),
                              *links, more])


def elsewhere(first: str, last: str, href: str) -> html.Div:
    """A range without hits of a site that has some: where they are, one click away."""
    when = first if first == last else f"{first} to {last}"
    return html.Div(className="notice notice-info", role="status", id="history-elsewhere",
                    children=[html.Span(f"No hits in this range. This site's hits are from "
                                        f"{when}: "),
                              dcc.Link("show all of them", href=href, className="site-link"),
                              "."])
