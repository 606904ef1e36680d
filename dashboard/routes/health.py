"""``GET /healthz``: is the app up, which backend, is the hit recorder keeping up.

For load balancers, uptime checks, ``bench/dashboard.py`` and people: a JSON document,
200 when the database answers and every background writer counts; 503 with the reasons
when the database does not answer, a writer's thread is down or a backlog is past its
bound (hits are then refused with 503, never acknowledged and dropped), or a request of
``/hit``'s lane has been in flight longer than ``request_wait`` (``waiting``: per lane of
``hitboard serve``, the requests in flight and the oldest one's seconds). What the writers
set aside for its content is counted (``quarantined``): it is not a failure of the
server, the Data page lists it. ``deliveries`` counts notifications that failed, whose
outcome is unknown or that wait for a retry: a failing channel is not the server's
failure either.
"""

from __future__ import annotations

import flask

import queries
from queries.notify.deliveries import counts as delivery_counts
from queries.status import as_dict

from ..frontdoor import lanes
from ..services import Services

QUICK = "quick"         # the lane of /hit and /healthz (dashboard/frontdoor/worker.py)


def register_health(server: flask.Flask, services: Services) -> None:
    def healthz():
        body = {
            "backend": "embedded" if queries.is_embedded(services.db) else "mongodb",
            "readonly": services.settings.readonly,
            "recorder": as_dict(services.recorder.status()) if services.recorder else None,
            "journal": as_dict(services.journal.status()) if services.journal else None,
            "cache": {"hits": services.cache.hits, "misses": services.cache.misses,
                      "bytes": services.cache.bytes, "max_bytes": services.cache.max_bytes,
                      "entries": len(services.cache)},
            "quarantined": sum(w.quarantine.count for w in services.workers
                               if getattr(w, "quarantine", None)),
            "restarts": sum(w.restarts for w in services.workers),
            "waiting": lanes.waiting(),
        }
        try:
            body["deliveries"] = delivery_counts(services.db)
        except Exception:  # the database check below reports it
            body["deliveries"] = None
        try:
            queries.list_sites(services.db)
        except Exception as exc:  # any failure to answer is what this endpoint reports
            return flask.jsonify(status="error", error=f"{type(exc).__name__}: {exc}",
                                 **body), 503
        problems = services.problems() + _waits(body["waiting"], services.settings.request_wait)
        if problems:
            return flask.jsonify(status="error", error="; ".join(problems), **body), 503
        return flask.jsonify(status="ok", **body)

    server.add_url_rule("/healthz", "hitboard_healthz", healthz)


def _waits(waiting: dict[str, dict], bound: float) -> list[str]:
    oldest = waiting.get(QUICK, {}).get("oldest_s", 0.0)
    return [f"a request to /hit or /healthz has waited {oldest:.1f} s (more than "
            f"{bound:g} s): the server process is held"] if oldest > bound else []
