"""``GET /healthz``: is the app up, which backend, is the hit recorder keeping up.

For load balancers, ``bench/dashboard.py`` and people: a JSON document, 200 when the
database answers, 503 with the reason when it does not.
"""

from __future__ import annotations

import flask

import queries
from queries.status import as_dict

from .services import Services


def register_health(server: flask.Flask, services: Services) -> None:
    def healthz():
        body = {
            "backend": "embedded" if queries.is_embedded(services.db) else "mongodb",
            "readonly": services.settings.readonly,
            "recorder": as_dict(services.recorder.status()) if services.recorder else None,
            "cache": {"hits": services.cache.hits, "misses": services.cache.misses},
        }
        try:
            queries.list_sites(services.db)
        except Exception as exc:  # any failure to answer is what this endpoint reports
            return flask.jsonify(status="error", error=f"{type(exc).__name__}: {exc}",
                                 **body), 503
        return flask.jsonify(status="ok", **body)

    server.add_url_rule("/healthz", "hitboard_healthz", healthz)
