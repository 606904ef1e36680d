"""The ``/hit`` beacon: a website counts its page views on this server.

``GET /hit?site=S&page=/path`` answers a 1x1 transparent GIF (an ``<img>`` or a
``<noscript>`` fallback); ``POST /hit`` with ``{"site": S, "page": "/path"}`` answers 204
(``navigator.sendBeacon``, which sends a string as ``text/plain``, so the body is read as
JSON whatever its content type). An optional ``ref`` carries ``document.referrer``: the
request's own Referer header is the page holding the beacon, so it names the site's host.
Hits go to the app's recorder (their dimensions to its dimension recorder) and, as events,
to a buffered writer flushed by its own thread: a request never waits on the database.

Bad input is a 400 with the reason: a missing, repeated or non-string value, an operator
in disguise (``{"page": {"$gt": ""}}``, ``page[$ne]=``), an invalid name; a site outside
the ``beacon_sites`` allow-list is a 403; a recorder that cannot keep up is a 503.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import logging
from urllib.parse import urlsplit

import flask

from queries import validation
from queries.dimensions import classify
from queries.errors import HitboardError, RecorderOverloadedError
from queries.events import EventWriter

from .services import Services

GIF = base64.b64decode("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")
MAX_BODY = 4096
FIELDS = ("site", "page")
OPTIONAL = ("ref",)
log = logging.getLogger(__name__)
NO_STORE = {"Cache-Control": "no-store, max-age=0", "Access-Control-Allow-Origin": "*"}


class BeaconError(HitboardError):
    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def allowed_sites(setting: str | None) -> frozenset[str] | None:
    if not setting:
        return None
    return frozenset(validation.site(s.strip()) for s in setting.split(",") if s.strip())


def query_args(request: flask.Request):
    """The parsed query string; raw bytes that are not UTF-8 are a 400, not a crash."""
    try:
        return request.args
    except UnicodeDecodeError:
        raise BeaconError("the query string must be UTF-8 (percent-encode other bytes)") \
            from None


def read_get(args) -> dict:
    for key in args:
        if key not in FIELDS + OPTIONAL:
            raise BeaconError(f"unexpected parameter {key[:40]!r}: send only site and page")
    values = {}
    for key in FIELDS:
        given = args.getlist(key)
        if len(given) != 1:
            raise BeaconError(f"give {key} exactly once" if given else f"missing {key}")
        values[key] = given[0]
    for key in OPTIONAL:
        given = args.getlist(key)
        if len(given) > 1:
            raise BeaconError(f"give {key} at most once")
        if given:
            values[key] = given[0]
    return values


def read_post(body: bytes) -> dict:
    if len(body) > MAX_BODY:
        raise BeaconError(f"body over {MAX_BODY} bytes", 413)
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):  # RecursionError: deep nesting
        raise BeaconError('the body must be JSON: {"site": "...", "page": "/..."}') from None
    if not isinstance(data, dict):
        raise BeaconError('the body must be a JSON object: {"site": "...", "page": "/..."}')
    extra = sorted(set(data) - set(FIELDS + OPTIONAL))
    if extra:
        raise BeaconError(f"unexpected field {extra[0][:40]!r}: send only site and page")
    for key in FIELDS:
        if key not in data:
            raise BeaconError(f"missing {key}")
    return data


def validate(values: dict, allowed: frozenset[str] | None) -> tuple[str, str, str]:
    """(site, page, query) or :class:`BeaconError`; values must be plain strings."""
    for key in FIELDS + OPTIONAL:
        if key in values and not isinstance(values[key], str):
            raise BeaconError(f"{key} must be a string, got {type(values[key]).__name__}")
    site = validation.site(values["site"])
    page, _, query = values["page"].partition("?")
    page = validation.page(page)
    if page == validation.WHOLE_SITE:
        raise BeaconError("page '*' means the whole site; send the page's path")
    if allowed is not None and site not in allowed:
        raise BeaconError(f"site {site!r} is not accepted by this server", 403)
    return site, page, query


def register_beacon(server: flask.Flask, services: Services) -> None:
    allowed = allowed_sites(services.settings.beacon_sites)
    events = None
    if services.recorder is not None:
        events = EventWriter(services.db, flush_interval=1.0)
        services.on_close(events.close)

    def hit():
        if services.recorder is None:
            return _refuse("this server is read-only: it records no hits", 503)
        try:
            values = read_get(query_args(flask.request)) if flask.request.method == "GET" \
                else read_post(flask.request.get_data(cache=False))
            site, page, query = validate(values, allowed)
            now = dt.datetime.now(dt.UTC)
            services.recorder.record(site, page, now)
            _record_dimensions(services, site, page, query, values.get("ref"), now)
            events.add(_event(now, site, page, query, flask.request))
        except BeaconError as exc:
            return _refuse(str(exc), exc.status)
        except RecorderOverloadedError as exc:
            return _refuse(str(exc), 503)
        except HitboardError as exc:
            return _refuse(str(exc), 400)
        if flask.request.method == "GET":
            return flask.Response(GIF, mimetype="image/gif", headers=NO_STORE)
        return flask.Response(status=204, headers=NO_STORE)

    server.add_url_rule("/hit", "hitboard_hit", hit, methods=["GET", "POST"])


def _record_dimensions(services: Services, site: str, page: str, query: str,
                       ref: str | None, now: dt.datetime) -> None:
    """Referrer, UTM, agent, country and visitor of a counted hit. The hit is already
    counted: if the dimension recorder refuses (overloaded), it is counted in its
    ``refused`` statistic and logged, not answered with an error a client would retry."""
    if services.dimensions is None:
        return
    request = flask.request
    try:
        page_host = urlsplit(request.referrer or "").hostname
    except ValueError:
        page_host = None
    dims = classify(site, page, query=query, referrer_url=ref,
                    agent=request.user_agent.string or None, address=request.remote_addr,
                    vhost=page_host)
    try:
        services.dimensions.record(site, page, now, dims)
    except RecorderOverloadedError as exc:
        log.warning("dimensions of a hit on %s not counted: %s", site, exc)


def _event(now: dt.datetime, site: str, page: str, query: str, request) -> dict:
    """A page view: the page viewed, not the beacon request (its status is unknown)."""
    return {"time": now, "site": site, "host": request.remote_addr or "", "method": "GET",
            "path": page, "query": query, "status": None, "bytes": 0,
            "referrer": request.referrer, "user_agent": request.user_agent.string or None}


def _refuse(reason: str, status: int) -> flask.Response:
    response = flask.jsonify(error=reason)
    response.status_code = status
    response.headers.update(NO_STORE)
    return response
