"""The frame around every page: navigation, site, pages, time zone, theme.

Its state lives in the URL (see ``state``). Two locations: ``url`` (``refresh=False``)
records a control change in the address bar and the history without re-rendering the
page; ``navigate`` (``refresh="callback-nav"``) moves to another view and lets Dash pages
render it afresh, as a link does. The back button re-renders the page from the URL and
:func:`sync_shell` puts the shell's controls back in step.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from functools import cache

import dash
from dash import ClientsideFunction, Input, Output, State, ctx, dcc, html, no_update

import queries
from queries.errors import HitboardError

from . import firstview, reads
from .account import account_area, register_account_callbacks
from .pacing import flag_stores
from .state import (
    MAX_PAGES,
    SHELL_KEYS,
    THEMES,
    ShellState,
    changed_search,
    encode,
    parse_search,
    updated,
)

MAX_OPTIONS = 50
RANK_DAYS = 30
MAX_RANKED = 1000


@cache
def time_zones() -> tuple[str, ...]:
    return tuple(sorted(zoneinfo.available_timezones()))


def layout():
    return firstview.fill(_layout(), lambda search: sync_shell(set(), search, *[None] * 4),
                          SHELL_OUTPUTS)


def _layout():
    return html.Div(id="app-root", className="app theme-light", children=[
        dcc.Location(id="url", refresh=False),
        dcc.Location(id="navigate", refresh="callback-nav"),
        # Each page's own query (range, filter...) as last seen in this tab: going back
        # to a page through the nav finds it as it was left (``nav_links``).
        dcc.Store(id="shell-views", storage_type="session", data={}),
        dcc.Store(id="account-done"), dcc.Store(id="account-reloaded"),
        html.Header(className="topbar", children=[
            html.Div(className="topbar-row", children=[
                dcc.Link("hitboard", href="/", className="brand"),
                html.Nav(id="shell-nav", className="nav"),
                dcc.RadioItems(id="shell-theme", className="segmented theme-switch",
                               inline=True, value=THEMES[0],
                               options=[{"label": t.title(), "value": t} for t in THEMES]),
                account_area(),
            ]),
            html.Div(className="topbar-row controls", children=[
                dcc.Dropdown(id="shell-site", placeholder="Site", clearable=False,
                             className="ctl ctl-site"),
                dcc.Dropdown(id="shell-pages", multi=True, className="ctl ctl-pages",
                             placeholder=f"Whole site (or pick up to {MAX_PAGES} pages)"),
                dcc.Dropdown(id="shell-tz", clearable=False, className="ctl ctl-tz",
                             options=[], placeholder="Time zone"),
                # Every zone, searched in the browser (``zoneOptions``): the control holds
                # only those shown.
                dcc.Store(id="shell-tz-list", data=list(time_zones())),
            ]),
            html.Div(id="shell-note", className="shell-note", role="status"),
        ]),
        html.Main(dash.page_container, className="content"),
        *flag_stores(),
    ])


# What :func:`sync_shell` writes, by name (its callback's outputs).
SHELL_OUTPUTS = {
    "search": Output("url", "search", allow_duplicate=True),
    "site": Output("shell-site", "value"),
    "site_options": Output("shell-site", "options"),
    "pages": Output("shell-pages", "value"),
    "page_options": Output("shell-pages", "options", allow_duplicate=True),
    "tz": Output("shell-tz", "value"),
    "theme": Output("shell-theme", "value"),
    "note": Output("shell-note", "children"),
}
UNCHANGED = dict.fromkeys(SHELL_OUTPUTS, no_update)


def site_options(names: list[str], synthetic: set[str]) -> list[dict]:
    """Synthetic (load generator) sites say so, so nobody mistakes them for real traffic."""
    return [{"label": f"{name} · synthetic" if name in synthetic else name, "value": name}
            for name in names]


def sync_shell(triggered: set[str], search: str | None, site, pages, tz, theme):
    """Keep the shell's controls and the URL in step, in both directions.

    ``triggered`` holds the ids that fired: when the URL is among them it wins and the
    controls follow it; otherwise only the controls that fired are written to the URL,
    and only if they differ from it (a control that reports its value as it mounts
    changes nothing). Returns a dict keyed as :data:`SHELL_OUTPUTS`, with ``no_update``
    where nothing changes. A new site clears the pages of the old one; over ``MAX_PAGES``
    pages the most visited are kept and the note says so."""
    query = parse_search(search)
    current = ShellState.from_query(query)
    url_site = reads.resolve_site(current.site)
    if not triggered or "url" in triggered:
        names = reads.sites()
        if url_site and url_site not in names:
            names = [*names, url_site]
        options = site_options(names, reads.synthetic_sites())
        url_pages = list(current.pages)
        wanted = {"site": url_site, "pages": url_pages, "tz": current.tz,
                  "theme": current.theme}
        showing = {"site": site, "pages": None if pages is None else list(pages), "tz": tz,
                   "theme": theme}
        # A control already showing the URL's value is left alone: setting it again
        # would run every callback that reads it (the pages' options, this one).
        return {**UNCHANGED, "site_options": options,
                "page_options": page_options(url_site, "", url_pages),
                **{k: no_update if showing[k] == v else v for k, v in wanted.items()}}
    changes, pages_out, note = {}, no_update, no_update
    if "shell-site" in triggered and site and site != url_site:
        changes.update(site=site, page=[])
        pages_out = []
    elif "shell-pages" in triggered and pages is not None:
        chosen, note = list(dict.fromkeys(pages)), None
        if len(chosen) > MAX_PAGES:
            chosen = pages_out = most_visited(url_site, chosen)[:MAX_PAGES]
            note = (f"{len(pages)} pages chosen: showing the {MAX_PAGES} with the most hits "
                    f"in the last {RANK_DAYS} days (at most {MAX_PAGES} at once).")
        if tuple(chosen) != current.pages:
            changes.update(site=url_site, page=chosen)
    if "shell-tz" in triggered and tz and tz != current.tz:
        changes["tz"] = tz
    if "shell-theme" in triggered and theme in THEMES and theme != current.theme:
        changes["theme"] = None if theme == THEMES[0] else theme
    new_search = changed_search(updated(query, **changes), search) if changes else None
    return {**UNCHANGED, "search": new_search or no_update, "pages": pages_out, "note": note}


def most_visited(site: str | None, pages: list[str]) -> list[str]:
    """``pages`` ordered by hits over the last ``RANK_DAYS`` days, most visited first
    ("Select all" on a site of 15 pages keeps the 10 that matter, not the first 10 by
    name); pages without hits keep their order, last."""
    if not site:
        return pages
    now = reads.now(reads.history_seconds())
    try:
        top = reads.shared(queries.top_pages, site, now - dt.timedelta(days=RANK_DAYS), now,
                           n=MAX_RANKED, seconds=reads.history_seconds())
    except HitboardError:
        return pages
    rank = {page: i for i, page in enumerate(top.index)}
    return sorted(pages, key=lambda page: rank.get(page, len(rank)))


def page_options(site: str | None, search_value: str | None, selected) -> list[str]:
    """Pages offered by the multi-select: those matching what was typed (at most
    ``MAX_OPTIONS``) plus the selected ones; only the selected once the limit is hit."""
    selected = list(selected or [])
    if not site or len(selected) >= MAX_PAGES:
        return selected
    needle = (search_value or "").lower()
    try:
        if needle:       # typing: every page is searched (one listing, cached)
            matches = [p for p in reads.site_pages(site) if needle in p.lower()]
        else:            # every view: only the first pages are read
            matches = reads.first_pages(site, MAX_OPTIONS + len(selected))
    except HitboardError:  # an invalid site in the URL: the page itself says why
        return selected
    return selected + [p for p in matches if p not in selected][:MAX_OPTIONS]


def nav_links(pathname: str | None, search: str | None, views: dict | None = None) -> list:
    """A link per registered page, keeping the shell's part of the query string and,
    for another page, its own part as it was last left (``views``: path -> search);
    the current page's link opens it afresh."""
    query = parse_search(search)
    shell = {k: v for k, v in query.items() if k in SHELL_KEYS}
    links = []
    for page in sorted(dash.page_registry.values(), key=lambda p: p.get("order") or 0):
        path = page["relative_path"]
        here = (pathname or "/") == path
        own = {k: v for k, v in parse_search((views or {}).get(path)).items()
               if k not in SHELL_KEYS}
        href = path + encode(shell if here else {**own, **shell})   # here: a fresh view
        links.append(dcc.Link(page["name"], href=href,
                              className="nav-link" + (" active" if here else ""),
                              id=f"nav-{page['module'].rsplit('.', 2)[-2]}"))  # its folder
    return links


def remember_view(pathname: str | None, search: str | None, views: dict | None) -> dict:
    """``views`` with this page's query as its last."""
    return {**(views or {}), pathname or "/": search or ""}


def register_callbacks(app: dash.Dash) -> None:
    register_account_callbacks(app)
    app.callback(
        output=SHELL_OUTPUTS,
        inputs={"search": Input("url", "search"), "site": Input("shell-site", "value"),
                "pages": Input("shell-pages", "value"), "tz": Input("shell-tz", "value"),
                "theme": Input("shell-theme", "value")},
        prevent_initial_call=True,
    )(lambda **values: sync_shell(_triggered_ids(), **values))

    app.callback(
        Output("shell-pages", "options", allow_duplicate=True),
        Input("shell-site", "value"),
        Input("shell-pages", "search_value"),
        State("shell-pages", "value"),
        prevent_initial_call=True,
    )(page_options)

    app.callback(
        Output("shell-nav", "children"),
        Input("url", "pathname"),
        Input("url", "search"),
        State("shell-views", "data"),
    )(nav_links)

    app.callback(
        Output("shell-views", "data"),
        Input("url", "pathname"),
        Input("url", "search"),
        State("shell-views", "data"),
    )(remember_view)

    app.clientside_callback(
        ClientsideFunction("hitboard", "zoneOptions"),
        Output("shell-tz", "options"),
        Input("shell-tz", "search_value"),
        Input("shell-tz", "value"),
        State("shell-tz-list", "data"),
    )

    app.clientside_callback(
        """function(theme) {
            const name = theme === "dark" ? "dark" : "light";
            document.documentElement.dataset.theme = name;
            return "app theme-" + name;
        }""",
        Output("app-root", "className"),
        Input("shell-theme", "value"),
    )


def _triggered_ids() -> set[str]:
    return {item["prop_id"].split(".")[0] for item in ctx.triggered if item["prop_id"] != "."}
