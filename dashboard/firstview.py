"""The first layout with the addressed page already in it.

Dash pages draw a page in two steps: the browser asks for the app's layout (the shell
and an empty page container), draws it, and only then do its locations report the URL,
the shell's controls ask for their values and the router for the page: a round trip and
a second render of the whole page before any of it shows. The layout request names the
page in its ``Referer`` (same origin: the full address), so the layout can be sent with
the page, its title and the shell's controls already filled in, and both locations set to
that address, so that nothing asks again on load.

The page is drawn ahead, in a thread, as its index is served: the browser loads and runs
its scripts before it asks for the layout, and the layout request takes what was drawn.

Only an address with a query is trusted (a Referer cut by the browser's policy keeps no
path and no query); without one, or for a page that cannot be drawn here, the layout
is the plain one and Dash's router draws the page as before.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from urllib.parse import urlsplit

import dash
import flask
from dash import dcc, html, no_update
from dash._pages import _parse_query_string, _path_to_page

from .authority import who
from .authority.scope import SiteRefused

LOG = logging.getLogger(__name__)
# Dash's own ids for the page container (dash.page_container's children).
LOCATION, CONTENT, STORE, DUMMY = ("_pages_location", "_pages_content", "_pages_store",
                                   "_pages_dummy")
# Pages drawn ahead: one at a time, at most MAX_AHEAD waiting for their layout request,
# each kept AHEAD_S (a browser that never asks, a bot, leaves its page behind).
MAX_AHEAD, AHEAD_S = 8, 10.0
CLOCK = time.monotonic
_DRAWER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hitboard-firstview")
# (app, host, path, query, principal) -> (until when it is kept, its drawing): an app's
# own, so two apps in one process (tests) never take each other's.
_ahead: dict[tuple, tuple[float, Future]] = {}
_ahead_lock = threading.Lock()


def fill(root, shell: Callable[[str], dict], outputs: dict):
    """``root`` (the app's layout, with ``dash.page_container`` in it) with the page of
    the address the layout is asked for; ``shell(search)`` gives the shell's controls
    keyed as ``outputs`` (a callback's), ``no_update`` where they keep their value."""
    address = requested_address()
    if address is None:
        return root
    drawn = _drawn(address)
    if drawn is None:
        return root
    content, title = drawn
    flask.after_this_request(_not_stored)
    found = {}
    for component in root._traverse():
        if getattr(component, "children", None) is dash.page_container:
            component.children = container(address, content, title)
        if getattr(component, "id", None) is not None:
            found[component.id] = component
    for prop, value in address.items():
        setattr(found["url"], prop, value)
    for name, value in shell(address["search"]).items():
        if value is not no_update:
            output = outputs[name]
            setattr(found[output.component_id], output.component_property, value)
    return root


def requested_address() -> dict | None:
    """The location of the page asking for the layout, as ``dcc.Location``'s properties,
    when the request says it (a Referer has no fragment: no page of the app uses one)."""
    if not flask.has_request_context() or not flask.request.path.endswith("/_dash-layout"):
        return None
    referrer = urlsplit(flask.request.referrer or "")
    if not referrer.query or referrer.netloc != flask.request.host:
        return None
    return {"pathname": referrer.path, "search": "?" + referrer.query,
            "href": referrer.geturl(), "hash": ""}


@dash.hooks.index()
def draw_ahead(index: str) -> str:
    """Dash's hook on a page's index: that page's layout drawn while the browser loads."""
    if not flask.request.query_string:
        return index
    key = _key(flask.request.script_root + flask.request.path,
               "?" + flask.request.query_string.decode("latin-1"))
    with _ahead_lock:
        now = CLOCK()
        for stale in [k for k, (until, _) in _ahead.items() if until < now]:
            _ahead.pop(stale)[1].cancel()
        if key not in _ahead and len(_ahead) < MAX_AHEAD:
            work = flask.copy_current_request_context(lambda: _page(*key[2:4]))
            _ahead[key] = (now + AHEAD_S, _DRAWER.submit(work))
    return index


def forget(server: flask.Flask) -> None:
    """Drop the drawings of an app that closes: they would hold places of the few kept
    (``MAX_AHEAD``) from the apps still open in the process."""
    with _ahead_lock:
        for key in [k for k in _ahead if k[0] == id(server)]:
            _ahead.pop(key)[1].cancel()


def _key(path: str, search: str) -> tuple:
    """A drawing's place in ``_ahead``: this app's, for this host, path, query and
    principal (a viewer is never handed a page drawn for someone who sees more)."""
    return id(flask.current_app._get_current_object()), flask.request.host, path, search, \
        who()


def _drawn(address: dict):
    """What :func:`_page` gives for ``address``: drawn ahead when it was (waiting for it
    if it is being drawn), else now."""
    key = _key(address["pathname"], address["search"])
    with _ahead_lock:
        _, future = _ahead.pop(key, (None, None))
    if future is not None and not future.cancel():
        return future.result()
    return _page(address["pathname"], address["search"])


def _not_stored(response):
    """A layout of one address is not the layout of the next: the browser asks for it at
    the same URL, and on the way back in its history may take what it kept."""
    response.headers["Cache-Control"] = "no-store"
    response.headers["Vary"] = "Referer"
    return response


def container(address: dict, content, title: str):
    """Dash's page container as its router leaves it for this address."""
    return html.Div([
        dcc.Location(id=LOCATION, refresh="callback-nav", **address),
        html.Div(content, id=CONTENT, disable_n_clicks=True),
        dcc.Store(id=STORE, data={"title": title}),
        html.Div(id=DUMMY, disable_n_clicks=True),
    ])


def _page(pathname: str, search: str):
    """(layout, title) of the registered page at ``pathname``, as the router draws it;
    None for an unknown path or a page that fails (the router then says why)."""
    app = dash.get_app()
    page, variables = _path_to_page(app.strip_relative_path(pathname))
    if not page:
        return None
    variables, layout = variables or {}, page.get("layout", "")
    try:
        content = layout(**{**variables, **_parse_query_string(search)}) \
            if callable(layout) else layout
    except SiteRefused:
        raise                   # a 403 for the whole layout: nothing of the site
    except Exception:  # noqa: BLE001 -- the router draws it again and reports the error
        LOG.exception("the page at %s%s could not be drawn in the first layout",
                      pathname, search)
        return None
    title = page["title"]
    return content, title(**variables) if callable(title) else title
