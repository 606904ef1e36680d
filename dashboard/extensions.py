"""Features that plug into the app's Flask server: routes, background jobs.

An extension is a function ``register_<name>(server, services)`` in its own module under
``dashboard/``. :func:`create_app` calls each one once, after the services are open and
before the first request. It may add Flask routes (``server.add_url_rule`` or a
blueprint), start a background thread and stop it with ``services.on_close(stop)``, or
read its own setting (``services.settings.<name>``, declared in ``settings.SETTINGS``).

To add one, import its module here and append the function to the tuple:
a one-line edit, like a CLI command in ``dashboard/cli/__init__.py``.
"""

from __future__ import annotations

from collections.abc import Callable

import flask

from . import rollup_job
from .authority import register_authority
from .loadgen import extension as loadgen
from .notify import register_notify
from .routes import annotations_api, api_v2, beacon, health, unsubscribe
from .services import Services
from .share import register_share

Extension = Callable[[flask.Flask, Services], None]


def hooks() -> tuple[Extension, ...]:
    return (register_authority, health.register_health, loadgen.register_loadgen,
            beacon.register_beacon, rollup_job.register_rollups,
            annotations_api.register_annotations_api, register_share,
            api_v2.register_stats_api, register_notify, unsubscribe.register_unsubscribe)


def install(server: flask.Flask, services: Services) -> None:
    for hook in hooks():
        hook(server, services)
