"""``/unsubscribe/<token>``: RFC 8058's one-click unsubscribe from an email report.

``GET`` only shows a button (mail scanners open every link: a GET changes nothing); the
``POST`` of RFC 8058's form body, ``List-Unsubscribe=One-Click``, removes the one
subscription holding the token, whoever sends it: mail providers post it from their
servers without ``Origin`` or a JSON body, so this path joins ``/hit`` outside the
write rule of ``dashboard/authority/origin.py``, and takes nothing else.
"""

from __future__ import annotations

from html import escape

import flask

from queries.notify.subscriptions import by_token, unsubscribe

from ..services import Services, get_services

PREFIX = "/unsubscribe/"
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
ONE_CLICK = {"List-Unsubscribe": "One-Click"}
HEADERS = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer",
           "X-Content-Type-Options": "nosniff",
           "Content-Security-Policy": "default-src 'none'; form-action 'self'; "
                                      "base-uri 'none'; frame-ancestors 'none'"}
UNKNOWN = "This unsubscribe link is unknown, or was used already."


def register_unsubscribe(server: flask.Flask, services: Services) -> None:
    server.add_url_rule(f"{PREFIX}<token>", "hitboard_unsubscribe", unsubscribe_page,
                        methods=["GET", "POST"])


def unsubscribe_page(token: str):
    db = get_services().db
    if flask.request.method == "GET":
        found = by_token(db, token)
        if found is None:
            return _page(UNKNOWN, 404)
        return _page(f"Stop the {found['period']}ly report of {found['site']} to "
                     f"{found['to']}?", 200, button=True)
    if flask.request.mimetype not in FORM_TYPES:
        return _page("Send RFC 8058's form: List-Unsubscribe=One-Click.", 415)
    if flask.request.form.to_dict(flat=True) != ONE_CLICK or flask.request.files:
        return _page("Send RFC 8058's form: List-Unsubscribe=One-Click, and nothing else.",
                     400)
    found = unsubscribe(db, token)
    if found is None:
        return _page(UNKNOWN, 404)
    return _page(f"{found['to']} no longer gets the {found['period']}ly report of "
                 f"{found['site']}.", 200)


def _page(text: str, status: int, button: bool = False) -> flask.Response:
    form = ("<form method='post'><input type='hidden' name='List-Unsubscribe' "
            "value='One-Click'><button type='submit'>Unsubscribe</button></form>"
            if button else "")
    body = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Unsubscribe"
            f"</title></head><body><p>{escape(text)}</p>{form}</body></html>")
    return flask.Response(body, status, HEADERS, mimetype="text/html")
