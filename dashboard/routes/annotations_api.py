"""``/api/annotations``: a deploy script marks a deploy, a tool reads the notes.

``POST /api/annotations`` with JSON ``{"site": S (omitted: every site), "time": ISO 8601
with an offset (omitted: now), "text": "...", "kind": "deploy", "author": "..."}`` answers
201 ``{"id": ...}``. It needs the admin secret (``Authorization: Bearer <token>``, or
a signed-in browser's cookie) and JSON from this server or no browser (see
``authority``); a user's notes carry the user's name. ``GET
/api/annotations?site=S&start=ISO&end=ISO`` lists them (reading needs what the pages
need: nothing until a user exists; a viewer reads only its sites' notes and those of
every site). Bad input is a 400 with the reason,
never a 500.
"""

from __future__ import annotations

import datetime as dt
import json

import flask

from queries import annotations as notes
from queries import validation
from queries.errors import HitboardError, NaiveTimestampError

from ..authority import requires, who
from ..authority.scope import check_site, visible
from ..services import Services

MAX_BODY = 8192
FIELDS = {"site", "time", "text", "kind", "author"}


def register_annotations_api(server: flask.Flask, services: Services) -> None:
    @requires("notes")
    def create():
        if services.settings.readonly:
            return _error("this server is read-only: it stores no annotations", 503)
        try:
            data = _body(flask.request)
            author = who().name if who().user else data.get("author")
            ident = notes.add_annotation(
                services.db, data.get("site"), _time(data.get("time")), data.get("text"),
                data.get("kind", "note"), author)
        except HitboardError as exc:
            return _error(str(exc), 400)
        return flask.jsonify(id=ident), 201

    def read():
        args = flask.request.args
        try:
            site = check_site(args.get("site"))
            start = _time(args.get("start"), dt.datetime(1970, 1, 1, tzinfo=dt.UTC))
            end = _time(args.get("end"), dt.datetime(9999, 1, 1, tzinfo=dt.UTC))
            rows = (notes.annotations_between(services.db, site, start, end) if site
                    else [a for a in notes.list_annotations(services.db, limit=notes.MAX_READ)
                          if start <= a["time"] < end])
        except HitboardError as exc:
            return _error(str(exc), 400)
        seen = set(visible({a["site"] for a in rows if a["site"]}))
        return flask.jsonify(annotations=[{**a, "time": a["time"].isoformat()} for a in rows
                                          if not a["site"] or a["site"] in seen])

    server.add_url_rule("/api/annotations", "hitboard_annotations_create", create,
                        methods=["POST"])
    server.add_url_rule("/api/annotations", "hitboard_annotations_read", read,
                        methods=["GET"])


def _body(request: flask.Request) -> dict:
    raw = request.get_data(cache=False)
    if len(raw) > MAX_BODY:
        raise HitboardError(f"body over {MAX_BODY} bytes")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise HitboardError('the body must be JSON: {"text": "...", "kind": "deploy"}') \
            from None
    if not isinstance(data, dict):
        raise HitboardError("the body must be a JSON object")
    extra = sorted(set(data) - FIELDS)
    if extra:
        raise HitboardError(f"unexpected field {extra[0][:40]!r}: "
                            f"send {', '.join(sorted(FIELDS))}")
    if "text" not in data:
        raise HitboardError("missing text")
    return data


def _time(value, default: dt.datetime | None = None) -> dt.datetime:
    """An ISO 8601 time with its offset; one without is refused, not guessed."""
    if value is None:
        return default or dt.datetime.now(dt.UTC)
    if not isinstance(value, str):
        raise HitboardError(f"time must be an ISO 8601 string, got {type(value).__name__}")
    when = validation.parse_time(value, "UTC") if _has_zone(value) else None
    if when is None:
        raise NaiveTimestampError(f"time {value[:40]!r} has no time zone: "
                                  "give one (e.g. 2026-11-21T14:00+01:00 or Z)")
    return when


def _has_zone(text: str) -> bool:
    try:
        return dt.datetime.fromisoformat(text).tzinfo is not None
    except ValueError:
        validation.parse_time(text)  # raises the usual "invalid time" message
        return False


def _error(reason: str, status: int) -> flask.Response:
    response = flask.jsonify(error=reason)
    response.status_code = status
    return response
