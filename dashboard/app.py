"""The application factory.

``create_app(settings)`` builds one Dash app with its own services (database connection,
hit recorder, result cache), its shell and every page of ``dashboard/pages``; production
runs ``gunicorn "dashboard:create_server()"``. One app per process is the deployment
model: Dash pages keep their registry in module globals.
"""

from __future__ import annotations

import atexit
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dash
import flask

from . import extensions, firstview, shell
from .frontdoor import guards
from .frontdoor.limits import Limits
from .services import EXTENSION_KEY, Services
from .settings import Settings, resolve

PACKAGE_DIR = Path(__file__).resolve().parent
PAGES_DIR = PACKAGE_DIR / "pages"
ASSETS_DIR = PACKAGE_DIR / "assets"


def create_app(settings: Settings | Mapping[str, Any] | None = None) -> dash.Dash:
    """A ready Dash app. ``settings`` is a resolved :class:`Settings` or a mapping of
    explicit values (Flask's ``test_config`` style); the rest comes from ``HITBOARD_*``
    environment variables and defaults."""
    if not isinstance(settings, Settings):
        settings = resolve(settings)
    services = Services.open(settings)
    try:
        app = dash.Dash(
            "dashboard",
            use_pages=True,
            pages_folder=str(PAGES_DIR),
            assets_folder=str(ASSETS_DIR),
            assets_ignore=r"hit\.js$",  # the sites' tracking script, served at /hit.js
            title="hitboard",
            update_title=None,  # the live page refreshes every 2 s: no "Updating..." title
            meta_tags=[{"name": "viewport", "content": "width=device-width, initial-scale=1"}],
        )
        app.server.extensions[EXTENSION_KEY] = services
        app.layout = shell.layout
        shell.register_callbacks(app)
        extensions.install(app.server, services)
        guards.install(app, Limits.from_settings(settings))
        _set_up_now(app)
        services.on_close(lambda: firstview.forget(app.server))
    except BaseException:
        services.close()
        raise
    atexit.register(services.close)
    return app


def _set_up_now(app: dash.Dash) -> None:
    """Dash's own setup (the app takes the callbacks its pages declared, builds its
    scripts and its pages' routing) before the first request, not at it: Dash marks it
    done as it begins, so a second request arriving meanwhile was served a page missing
    its title function (a TypeError in the browser when two opened a fresh server)."""
    response = app.server.test_client().get("/_dash-dependencies")
    if response.status_code != 200:
        raise RuntimeError(f"Dash's setup failed: {response.status_code}")


def create_server(settings: Settings | Mapping[str, Any] | None = None) -> flask.Flask:
    """The WSGI application, for ``gunicorn "dashboard:create_server()"``."""
    return create_app(settings).server
