"""Real receivers for the notification tests: an SMTP server (aiosmtpd) on a free port
that keeps every message parsed, and an ``http.server`` webhook receiver that checks each
body's ``X-Hitboard-Signature`` and answers the statuses it is told to."""

from __future__ import annotations

import email
import email.policy
import hashlib
import hmac
import json
import threading
from contextlib import contextmanager
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from aiosmtpd.controller import Controller
from dashkit import free_port

from dashboard.notify.context import NotifyContext
from dashboard.settings import resolve


class Inbox:
    """aiosmtpd's handler: each message received, parsed with ``email.policy.default``."""

    def __init__(self):
        self.messages: list[EmailMessage] = []
        self.envelopes: list[tuple[str, list[str]]] = []

    async def handle_DATA(self, server, session, envelope):
        self.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
        self.messages.append(email.message_from_bytes(envelope.original_content,
                                                      policy=email.policy.default))
        return "250 OK"


@contextmanager
def smtp_server():
    """(an ``smtp://`` URL, its inbox) for the block."""
    inbox = Inbox()
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield f"smtp://127.0.0.1:{port}", inbox
    finally:
        controller.stop()


class Hooks:
    """What the webhook receiver got, and what it answers next (default 200)."""

    def __init__(self, secret: str | None):
        self.secret = secret
        self.received: list[dict] = []      # {"body", "signed", "path"}
        self.answers: list[int] = []        # statuses to answer, in order, then 200

    def verified(self, body: bytes, header: str | None) -> bool:
        if not self.secret or header is None:
            return False
        expected = "sha256=" + hmac.new(self.secret.encode(), body,
                                        hashlib.sha256).hexdigest()
        return hmac.compare_digest(expected, header)


@contextmanager
def webhook_receiver(secret: str | None = "s3cret"):
    """(the receiver's base URL, its :class:`Hooks`) for the block."""
    hooks = Hooks(secret)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            hooks.received.append({
                "path": self.path, "body": json.loads(body),
                "signed": hooks.verified(body, self.headers.get("X-Hitboard-Signature")),
                "type": self.headers.get("Content-Type")})
            status = hooks.answers.pop(0) if hooks.answers else 200
            self.send_response(status)
            if 300 <= status < 400:
                self.send_header("Location", "/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hooks
    finally:
        server.shutdown()
        server.server_close()


def context(db, store, render_chart=None, **settings) -> NotifyContext:
    """What the scheduler is handed, on ``db`` with ``settings`` (no chart unless given)."""
    return NotifyContext(db, resolve({"store": str(store), **settings}, environ={}),
                         render_chart)
