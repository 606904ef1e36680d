"""The ``/hit`` beacon: a website counts its page views on this server.

``GET /hit?site=S&page=/path`` answers a 1x1 transparent GIF (an ``<img>`` or a
``<noscript>`` fallback); ``POST /hit`` with ``{"site": S, "page": "/path"}`` (and
optionally ``"referrer"``) answers 204. ``navigator.sendBeacon`` sends a string as
``text/plain`` and a Blob with its own type: ``text/plain`` and ``application/json`` bodies
are both read as JSON. ``OPTIONS /hit`` answers CORS preflights and ``HEAD /hit`` 200 (a
reachability check that counts nothing); who may send is ``beacon_origins``' business.
A custom event (a signup, a purchase) is a ``POST`` naming it: ``{"site", "page",
"event": "Signup", "props": {"plan": "pro"}, "revenue": {"currency": "EUR", "amount":
"49.00"}}`` (``queries.custom.payload`` bounds it); it is kept as it came
(``queries.events.custom``), not counted as a page view. ``/hit.js`` is the one-tag
tracking script (``assets/hit.js``). A hit is answered once it is written in the
server's journal (``queries.journal``), whose pipeline counts it (its hits, dimensions
and raw event) exactly once, after a SIGKILL of the server too: a request never waits on
the database.

The page is stored decoded (``/caf%C3%A9`` as ``/café``), as log ingestion stores it; the
referrer is a whole URL, of which only the host is counted (as a log's Referer), and it is
kept as sent.

Bad input is a 400 with the reason: a missing, repeated or non-string value, an operator
in disguise (``{"page": {"$gt": ""}}``, ``page[$ne]=``), an invalid name; a site outside
the ``beacon_sites`` allow-list is a 403; a journal that cannot take the hit is a 503.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import logging
from functools import cache, partial
from pathlib import Path
from urllib.parse import parse_qsl

import flask
from calmjs.parse import es5
from calmjs.parse.unparsers.es5 import minify_print

from queries import validation
from queries.custom import payload as custom_payload
from queries.errors import HitboardError
from queries.events import custom as custom_raw
from queries.journal import records
from queries.journal.log import JournalError
from queries.stats.sites import primary_source, register

from ..services import Services
from .beacon_gate import GateError, SiteGate
from .beacon_origins import OriginPolicy, cors_headers, parse_policy

GIF = base64.b64decode("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")
MAX_BODY = 16 * 1024
FIELDS = ("site", "page")
OPTIONAL = ("referrer",)
EVENT_FIELDS = ("event", "props", "revenue")      # a custom event's: POST only
ENGAGEMENT = "engagement"     # ms the page was visible, sent when it is left: POST only
MAX_REFERRER = 2048
RETRY_AFTER = 5       # seconds a refused sender waits before trying again
NO_STORE = {"Cache-Control": "no-store, max-age=0"}
SCRIPT = Path(__file__).resolve().parents[1] / "assets" / "hit.js"
log = logging.getLogger(__name__)


class BeaconError(HitboardError):
    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


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
            raise BeaconError(f"unexpected parameter {key[:40]!r}: send only site, page "
                              "and referrer")
    values = {}
    for key in FIELDS + OPTIONAL:
        given = args.getlist(key)
        if len(given) > 1 or (not given and key in FIELDS):
            raise BeaconError(f"give {key} exactly once" if given else f"missing {key}")
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
    extra = sorted(set(data) - {*FIELDS, *OPTIONAL, *EVENT_FIELDS, ENGAGEMENT})
    if extra:
        raise BeaconError(f"unexpected field {extra[0][:40]!r}: send only site, page, "
                          "referrer, and for a custom event event, props and revenue")
    if ENGAGEMENT in data and len(set(data) & {*EVENT_FIELDS, ENGAGEMENT}) > 1:
        raise BeaconError("an engagement is sent alone, not with a custom event")
    for key in FIELDS:
        if key not in data:
            raise BeaconError(f"missing {key}")
    return data


def validate(values: dict, allowed: frozenset[str] | None) -> tuple[str, str, str]:
    """(site, page, query) or :class:`BeaconError`; values must be plain strings. The
    page is a URL path as ``location.pathname`` gives it, percent-encoded: it is decoded
    (``validation.decoded_path``), as the log parser decodes a logged path, so both
    count one page under one name; its length limit applies once decoded."""
    for key in FIELDS + OPTIONAL:
        if key in values and not isinstance(values[key], str) and not (
                key in OPTIONAL and values[key] is None):      # null: not sent
            raise BeaconError(f"{key} must be a string, got {_json_type(values[key])}")
    site = validation.site(values["site"])
    page, _, query = values["page"].partition("?")
    page = validation.page(validation.decoded_path(page))
    if page == validation.WHOLE_SITE:
        raise BeaconError("page '*' means the whole site; send the page's path")
    validation.text(query, "the page's query string", MAX_REFERRER)
    for key, value in parse_qsl(query):
        if key.startswith("utm_"):
            validation.text(value, key, validation.MAX_VALUE)
    if allowed is not None and site not in allowed:
        raise BeaconError(f"site {site!r} is not accepted by this server", 403)
    return site, page, query


def register_beacon(server: flask.Flask, services: Services) -> None:
    settings = services.settings
    policy = parse_policy(settings.beacon_sites)
    gate = SiteGate(services.db, services.sites, settings.beacon_new_sites,
                    settings.beacon_pages_per_day, settings.beacon_unseen_pages)
    if services.journal is not None:
        for site in policy.sites or ():
            register(services.db, site, "admin")

    def hit():
        origin = flask.request.headers.get("Origin")
        if flask.request.method == "OPTIONS":
            return _preflight(policy, origin)
        allowed = origin if origin and policy.any_site_accepts(origin) else None
        if flask.request.method == "HEAD":
            return flask.Response(status=200, headers={**NO_STORE, **cors_headers(allowed)})
        if services.journal is None:
            return _refuse("this server is read-only: it records no hits", 503, allowed)
        try:
            values = read_get(query_args(flask.request)) if flask.request.method == "GET" \
                else read_post(flask.request.get_data(cache=False))
            site, page, query = validate(values, policy.allowed_sites)
            _check_origin(policy, site, origin)
            referrer = _referrer(values)
            event = _custom_event(values)
            gate.site(site, origin)
            if not services.accepting():
                return _refuse("the server cannot store hits now: try again later", 503,
                               allowed, retry=RETRY_AFTER)
            now = dt.datetime.now(dt.UTC)
            page = gate.page(site, page, now)
            services.journal.append(_record(services, now, site, page, query, referrer,
                                            event))
        except (BeaconError, GateError) as exc:
            return _refuse(str(exc), exc.status, allowed)
        except JournalError as exc:
            log.warning("a hit on %s refused: %s", site, exc)
            return _refuse("the server cannot store hits now: try again later", 503,
                           allowed, retry=RETRY_AFTER)
        except HitboardError as exc:
            return _refuse(str(exc), 400, allowed)
        return _accepted(allowed)

    server.add_url_rule("/hit", "hitboard_hit", hit,
                        methods=["GET", "POST", "HEAD", "OPTIONS"], provide_automatic_options=False)
    server.add_url_rule("/hit.js", "hitboard_hit_js", _script)


def _accepted(origin: str | None) -> flask.Response:
    """A hit taken: the GIF for a GET, 204 for a POST."""
    headers = {**NO_STORE, **cors_headers(origin)}
    if flask.request.method == "GET":
        return flask.Response(GIF, mimetype="image/gif", headers=headers)
    return flask.Response(status=204, headers=headers)


def _counts_beacon(services: Services, site: str) -> bool:
    """Whether the site's counters count its beacon hits: the beacon is its primary
    source (made so by its first hit, if no source has fed it yet)."""
    primary = services.sites.get(site).primary_source
    if primary is None:
        primary = primary_source(services.db, site, "beacon")
        services.sites.forget(site)
    return primary == "beacon"


def _preflight(policy: OriginPolicy, origin: str | None) -> flask.Response:
    """A CORS preflight: allowed origins get the methods and headers they may use."""
    if origin and not policy.any_site_accepts(origin):
        refused = _refuse(f"origin {origin[:100]!r} may not send hits to this server", 403)
        del refused.headers["Access-Control-Allow-Origin"]    # the browser must not send
        return refused
    return flask.Response(status=204, headers={**NO_STORE, **cors_headers(origin, True)})


def _check_origin(policy: OriginPolicy, site: str, origin: str | None) -> None:
    """A browser request names its page's origin: it must be one of the site's."""
    if origin and not policy.site_accepts(site, origin):
        raise BeaconError(f"origin {origin[:100]!r} may not send hits for site {site!r}", 403)


def _json_type(value) -> str:
    """What a sender wrote, in JSON's words (not Python's ``dict`` or ``NoneType``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    return {dict: "an object", list: "an array"}.get(type(value), "a number")


def _referrer(values: dict) -> str | None:
    """The page's own referrer (``document.referrer``), when the sender gives it."""
    referrer = values.get("referrer")
    if referrer is None:
        return None
    if not isinstance(referrer, str):
        raise BeaconError(f"referrer must be a string, got {_json_type(referrer)}")
    return validation.text(referrer, "referrer", MAX_REFERRER) or None


def _custom_event(values: dict):
    """What a POST that is not a page view sends, checked, as a function of (time, site,
    page, address, agent) making its document (a custom event's, an engagement's);
    None for a page view."""
    if ENGAGEMENT in values:
        return partial(_engagement_document, custom_payload.engagement(values[ENGAGEMENT]))
    if "event" not in values:
        if "props" in values or "revenue" in values:
            raise BeaconError("props and revenue belong to a custom event: name it (event)")
        return None
    return partial(_event_document, custom_payload.custom_event(
        values["event"], values.get("props"), values.get("revenue")))


def _event_document(event, time, site, page, address, agent) -> dict:
    return custom_raw.document(time, site, page, event, address, agent)


def _engagement_document(ms, time, site, page, address, agent) -> dict:
    return custom_raw.engagement_document(time, site, page, ms, address, agent)


@cache
def minified_script() -> bytes:
    """``assets/hit.js`` minified once, its local names shortened (the source keeps its
    comments and words); read on the first request, so a server starts without it."""
    return minify_print(es5(SCRIPT.read_text(encoding="utf-8")), obfuscate=True,
                        obfuscate_globals=False).encode()


def _script() -> flask.Response:
    """The tracking script: public, cacheable for an hour, sets no cookie."""
    return flask.Response(minified_script(), mimetype="text/javascript",
                          headers={"Cache-Control": "public, max-age=3600",
                                   "Access-Control-Allow-Origin": "*"})


def _record(services: Services, now: dt.datetime, site: str, page: str, query: str,
            referrer: str | None, event) -> bytes:
    """The journal's record of an accepted request: a custom event, a page view kept
    apart (the site's logs count it) or a page view to count."""
    request = flask.request
    address, agent = request.remote_addr or "", request.user_agent.string or None
    if event is not None:
        return records.document(records.CUSTOM, event(now, site, page, address, agent))
    if not _counts_beacon(services, site):
        return records.document(records.APART, {
            "time": now, "site": site, "host": address, "method": request.method,
            "path": page, "query": query, "status": None, "bytes": 0,
            "referrer": referrer if referrer is not None else request.referrer,
            "user_agent": agent})
    return records.pageview(records.Pageview(
        now, site, page, query, referrer, address, request.method, request.referrer, agent,
        services.sites.get(site).unknown_bots))


def _refuse(reason: str, status: int, origin: str | None = None,
            retry: int | None = None) -> flask.Response:
    """A JSON reason; ``origin``, an allowed one, may read it with credentials, any other
    page without; ``retry``: seconds to wait before sending again (a 503)."""
    response = flask.jsonify(error=reason)
    response.status_code = status
    response.headers.update({**NO_STORE, **cors_headers(origin)})
    if retry is not None:
        response.headers["Retry-After"] = str(retry)
    return response
