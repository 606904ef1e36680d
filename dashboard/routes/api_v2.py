"""``POST /api/v2/query``: the Stats API (``queries.api``), for scripts holding an API
key (``Authorization: Bearer hbk_...``) or the admin secret; ``GET
/api/v2/openapi.json`` describes it. Bad input is a 400 naming it, a site the key may
not read a 403; not JSON 415 and too large 413 come from the rules every write meets."""

from __future__ import annotations

import json
import logging

import flask
from pymongo.errors import PyMongoError

from queries.api import run_query
from queries.api.openapi import spec
from queries.api.parse import site_of
from queries.errors import HitboardError

from ..authority.guard import http_refusal
from ..authority.readers import api_refusal, site_refusal
from ..services import Services

log = logging.getLogger(__name__)
NO_STORE = {"Cache-Control": "no-store"}


def register_stats_api(server: flask.Flask, services: Services) -> None:
    def query():
        refused = api_refusal()
        if refused is not None:
            return http_refusal(refused)
        try:
            body = json.loads(flask.request.get_data(cache=False).decode("utf-8"))
            site = site_of(body)
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            return _error(str(exc) if isinstance(exc, HitboardError)
                          else "the body must be JSON", 400)
        refused = site_refusal(site)
        if refused is not None:
            return http_refusal(refused)
        try:
            answer = run_query(services.db, body, services.settings.events_ttl_days)
        except HitboardError as exc:
            return _error(str(exc), 400)
        except PyMongoError as exc:
            log.warning("Stats API query failed: %s", exc)
            return _error("the store cannot be read now: try again", 503)
        return flask.jsonify(answer), 200, NO_STORE

    def openapi():
        return flask.jsonify(spec())

    server.add_url_rule("/api/v2/query", "hitboard_stats_api", query, methods=["POST"])
    server.add_url_rule("/api/v2/openapi.json", "hitboard_stats_api_spec", openapi,
                        methods=["GET"])


def _error(reason: str, status: int) -> flask.Response:
    response = flask.jsonify(error=reason)
    response.status_code = status
    return response
