"""Helpers for the dashboard's tests: a fresh app per test on its own store, and seeding.

Dash pages keep module-level state: ``dash.page_registry``, emptied around every test by
the ``fresh_page_registry`` fixture (tests/conftest.py) as Dash's own tests do, and the
callbacks declared with ``dash.callback``, which ``create_app`` has its app take at once
(so no app leaves callbacks behind for the next one).
"""

from __future__ import annotations

import datetime as dt
import socket
from contextlib import contextmanager

import queries

# The admin secret of every test app, as `hitboard serve` always has one (long enough
# that the server would not warn about it).
ADMIN_TOKEN = "test-admin-secret-7f3c9a1e"


@contextmanager
def dashboard_app(store, **settings):
    """A ``create_app`` app on ``store`` holding its own callbacks, with the admin
    secret :data:`ADMIN_TOKEN` unless ``admin_token`` says otherwise; its services are
    closed afterwards."""
    from dashboard import create_app
    from dashboard.services import get_services

    app = create_app({"store": str(store), "admin_token": ADMIN_TOKEN, **settings})
    try:
        yield app
    finally:
        get_services(app.server).close()


def register_sites(app, *names: str) -> None:
    """Register sites as ``hitboard site add`` does: the /hit beacon counts only those."""
    from dashboard.services import get_services
    from queries.stats.sites import register

    for name in names:
        register(get_services(app.server).db, name, "admin")


def counted(app):
    """The app's services once every ``/hit`` it answered is counted (its journal's
    pipeline caught up) and its recorders flushed."""
    from dashboard.services import get_services

    services = get_services(app.server)
    assert services.journal.wait_counted(), services.journal.last_error
    services.recorder.flush()
    return services


@contextmanager
def full_disk(app):
    """The app's embedded store may grow by one page at most: its writes fail as on a
    full disk until the block ends."""
    from dashboard.services import get_services

    writer = get_services(app.server).db.client.store._writer
    writer.execute(f"PRAGMA max_page_count="
                   f"{writer.execute('PRAGMA page_count').fetchone()[0] + 1}")
    try:
        yield
    finally:
        writer.execute("PRAGMA max_page_count=1073741823")


def held(client, answers) -> None:
    """``/hit`` answers given while the store's disk is full: each a 204 (in the journal,
    counted once there is room), and ``/healthz`` a 503 meanwhile, saying why."""
    from dash.testing.wait import until

    assert {r.status_code for r in answers} == {204}
    until(lambda: client.get("/healthz").status_code == 503, timeout=30)
    assert "not counted yet" in client.get("/healthz").get_json()["error"]


def seed(db, site: str, hits) -> None:
    """Record ``hits`` — (timestamp, page, count) triples — and write them now."""
    with queries.HitRecorder(db, flush_interval=3600, preallocate_next_day=False) as recorder:
        for ts, page, count in hits:
            recorder.record(site, page, ts, n=count)


def noon_hits(zone, today: dt.date, days: int) -> list:
    """Hits at local noon 1..``days`` days before ``today`` in ``zone``: 10·k on /a and k
    on /b, k days ago, so every day and page has a total of its own."""
    hits = []
    for days_ago in range(1, days + 1):
        noon = dt.datetime.combine(today - dt.timedelta(days=days_ago), dt.time(12), zone)
        hits += [(noon, "/a", 10 * days_ago), (noon, "/b", days_ago)]
    return hits


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def utc(*args) -> dt.datetime:
    return dt.datetime(*args, tzinfo=dt.UTC)


def layout_draws(page: str) -> list[str]:
    """The request paths of every drawing of ``page``'s layout from now on (Dash pages'
    module name, e.g. ``dashboard.pages.history.page``; the registry is each test's own:
    ``fresh_page_registry``)."""
    import flask
    from dash import page_registry

    registered = page_registry[page]
    drawn, layout = [], registered["layout"]

    def counted(**query):
        drawn.append(flask.request.path)
        return layout(**query)

    registered["layout"] = counted
    return drawn


def page_module(name: str):
    """A page module as Dash pages loaded it (after ``create_app``)."""
    import sys

    return sys.modules[f"dashboard.pages.{name}.page"]


def signin_code(server) -> str:
    """A one-time code of a sign-in link, issued in ``server``'s store as ``hitboard
    signin-link`` does."""
    from dashboard.services import get_services
    from queries import signin_links

    return signin_links.issue(get_services(server).db)


def signed_in(client):
    """A Flask test ``client`` holding the session cookie the sign-in link sets."""
    response = client.get("/signin", query_string={"code": signin_code(client.application)})
    assert response.status_code == 303, response.get_data(as_text=True)
    return client


def account_state(client) -> str:
    """What the top bar's account control shows the client (components.account)."""
    layout = client.get("/_dash-layout").get_json()
    found = [c["props"]["data-state"] for c in _components(layout)
             if c.get("props", {}).get("id") == "account"]
    assert len(found) == 1
    return found[0]


def _components(node):
    if isinstance(node, dict):
        if "props" in node:
            yield node
        for value in node.values():
            yield from _components(value)
    elif isinstance(node, list):
        for value in node:
            yield from _components(value)


def as_admin(server):
    """A request context of ``server`` carrying the admin token, for calling a
    state-changing callback as a plain function."""
    return server.test_request_context(
        "/", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})


def sign_in(dash_duo, path: str = "/") -> None:
    """Open a sign-in link in ``dash_duo``'s browser (its server started, serving the
    test's app: ``_current``), landing on ``path``."""
    from urllib.parse import urlencode

    code = signin_code(dash_duo.server._current)
    dash_duo.driver.get(f"{dash_duo.server_url}/signin?"
                        + urlencode({"code": code, "next": path}))


def post_callback(client, outputs: list[str], inputs: dict, state: dict | None = None,
                  changed: tuple[str, ...] = (), headers: dict | None = None,
                  matched: tuple[list, ...] = ()):
    """POST one server-side callback to ``/_dash-update-component`` as the browser does.
    ``outputs``: ``"id.prop"`` strings (without ``allow_duplicate``'s hashes);
    ``inputs``/``state``: ``{"id.prop": value}``; ``changed``: the ``"id.prop"`` that
    fired; ``headers``: more request headers (``Origin``, ``Authorization``...);
    ``matched``: the inputs of pattern-matching ids (``ALL``), each a list of ``{id,
    property, value}``, after ``inputs``. Returns the response."""
    import json

    from dash._utils import split_callback_id

    def props(values: dict) -> list[dict]:
        return [{"id": key.rsplit(".", 1)[0], "property": key.rsplit(".", 1)[1], "value": v}
                for key, v in values.items()]

    key = callback_key(outputs)
    body = {"output": key, "outputs": split_callback_id(key),
            "inputs": props(inputs) + list(matched),
            "state": props(state or {}), "changedPropIds": list(changed)}
    return client.post("/_dash-update-component", data=json.dumps(body),
                       content_type="application/json", headers=headers or {})


def callback_key(outputs: list[str]) -> str:
    """The key the current Dash app dispatches the callback of ``outputs`` on: their
    ``id.prop`` joined, each with its ``allow_duplicate`` hash when it has one."""
    import dash

    def bare(key: str) -> list[str]:
        inner = key[2:-2] if key.startswith("..") else key
        return [part.split("@")[0] for part in inner.split("...")]

    for key in dash.get_app().callback_map:
        if bare(key) == list(outputs):
            return key
    return ".." + "...".join(outputs) + ".." if len(outputs) > 1 else outputs[0]
