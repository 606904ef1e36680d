"""The gunicorn worker of ``hitboard serve``: gevent reads requests, threads run the app.

gunicorn's threaded worker gives a connection a thread from its first byte, so eight
clients sending their headers a byte at a time hold its eight threads (slowloris). Here
gevent's hub owns every socket: a greenlet per connection reads a request's head within
``header_timeout`` and its body within ``body_timeout`` and its route's size limit
(refused with 413 by its Content-Length before a byte of it is read), and only a whole
request reaches a thread. Nothing is monkey-patched: the app (pymongo, sqlite3, the
recorders' threads, pandas) runs in ordinary threads as under gthread, so a CPU-bound
History render or a flush to SQLite never stops the hub. The beacon and the health
check have a pool of threads of their own: they never queue behind Dash callbacks.
"""

from __future__ import annotations

import json
import os
import socket
from datetime import datetime

import gevent
from gevent import socket as gsocket
from gevent.threadpool import ThreadPool
from gunicorn.http import wsgi
from gunicorn.workers.ggevent import GeventWorker

from ..settings import resolve
from .limits import BodyTooLarge, Limits, read_body

QUICK_PATHS = frozenset({"/hit", "/hit.js", "/healthz"})
LINGER_SECONDS = 1.0            # a refused client's unread bytes are drained this long,
LINGER_BYTES = 1024 * 1024      # or this many, so that it reads the refusal (not a reset)


class BodyTimeout(Exception):
    """The client took longer than ``body_timeout`` to send a request's body."""


class FrontDoorWorker(GeventWorker):
    """``worker_class`` of ``hitboard serve``; with plain gunicorn:
    ``gunicorn -k dashboard.frontdoor.worker.FrontDoorWorker "dashboard:create_server()"``
    (settings from ``HITBOARD_*`` then)."""

    def patch(self) -> None:
        # Only the listening sockets become gevent's: nothing else is monkey-patched.
        self.sockets = [gsocket.socket(s.FAMILY, socket.SOCK_STREAM, fileno=s.sock.detach())
                        for s in self.sockets]

    def run(self) -> None:
        settings = getattr(self.app, "hitboard_settings", None) or resolve()
        self.limits = Limits.from_settings(settings)
        self.quick = ThreadPool(settings.threads)
        self.pages = ThreadPool(settings.threads)
        try:
            super().run()
        finally:
            self.quick.kill()
            self.pages.kill()

    def timeout_ctx(self):
        # The whole request head must come within the deadline (an idle kept-alive
        # connection's wait included); past it the connection is closed.
        return gevent.Timeout(self.limits.header_timeout, False)

    def handle_request(self, listener_name, req, sock, addr) -> bool:
        """One request: read whole, run in a thread, answered from the hub."""
        limit = self.limits.body_limit(req.path)
        try:
            if _declared_length(req) > limit:
                raise BodyTooLarge(limit)
            started = datetime.now()
            self.cfg.pre_request(self, req)
            resp, environ = wsgi.create(req, sock, addr, listener_name, self.cfg)
            _buffer_body(environ, req, limit, self.limits.body_timeout)
        except BodyTooLarge as exc:
            self._refuse(sock, 413, "Content Too Large", str(exc))
        except BodyTimeout:
            self._refuse(sock, 408, "Request Timeout", f"the body did not arrive within "
                         f"{self.limits.body_timeout:g} seconds")
        environ["wsgi.multithread"] = True
        self.nr += 1
        if self.nr >= self.max_requests and self.alive:
            self.log.info("Autorestarting worker after current request.")
            self.alive = False
        if not self.alive or not self.cfg.keepalive:
            resp.force_close()
        pool = self.quick if req.path in QUICK_PATHS else self.pages
        try:
            # The thread writes to a copy of the socket's descriptor: should this
            # greenlet be killed and the socket closed, the number is not reused.
            rest = pool.apply(_run_app, (self.wsgi, environ, resp, os.dup(sock.fileno())))
            if isinstance(rest, environ["wsgi.file_wrapper"]):
                _send_file(resp, rest)
            elif rest:
                sock.sendall(rest)
        except OSError:
            raise
        except Exception:
            if resp.headers_sent:
                self.log.exception("Error handling request")
                raise StopIteration() from None
            raise
        finally:
            environ["wsgi.input"].close()
            self.log.access(resp, req, environ, datetime.now() - started)
            try:
                self.cfg.post_request(self, req, environ, resp)
            except Exception:
                self.log.exception("Exception in post_request hook")
        if resp.should_close():
            raise StopIteration()
        return True

    def _refuse(self, sock, status: int, reason: str, message: str):
        """Answer ``status`` and close: the rest of the request is not read (a
        moment's worth is drained and dropped, so the client sees the answer)."""
        self.log.warning("Refused a request with %s: %s", status, message)
        body = json.dumps({"error": message}).encode()
        head = (f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n")
        try:
            sock.sendall(head.encode("latin-1") + body)
            sock.shutdown(socket.SHUT_WR)
            with gevent.Timeout(LINGER_SECONDS, False):
                drained = 0
                while drained < LINGER_BYTES and (data := sock.recv(65536)):
                    drained += len(data)
        except OSError:
            pass
        raise StopIteration()


def _declared_length(req) -> int:
    """The body's Content-Length (gunicorn has checked it is one decimal number), 0
    without one."""
    for name, value in req.headers:
        if name == "CONTENT-LENGTH":
            return int(value)
    return 0


def _buffer_body(environ: dict, req, limit: int, timeout: float) -> None:
    """Read the whole body now (the app then reads a file, never the socket) and
    describe it as a body of known length, chunked or not."""
    with gevent.Timeout(timeout, BodyTimeout):
        body, size = read_body(req.body, limit)
    environ["wsgi.input"] = body
    if size or "CONTENT_LENGTH" in environ or "HTTP_TRANSFER_ENCODING" in environ:
        environ["CONTENT_LENGTH"] = str(size)
    environ.pop("HTTP_TRANSFER_ENCODING", None)


def _run_app(app, environ: dict, resp, fd: int):
    """In a thread: the WSGI call, and its response written to the socket (``fd``, a
    copy of its descriptor, closed here) as far as it goes without waiting: the socket
    is non-blocking. Returns what is left to send, or the server's file wrapper: the
    hub sends them."""
    try:
        result = app(environ, resp.start_response)
        if isinstance(result, environ["wsgi.file_wrapper"]):
            return result
        data = _gather(resp, result)
        try:
            sent = os.write(fd, data)
        except BlockingIOError:
            sent = 0
        return memoryview(data)[sent:]
    finally:
        os.close(fd)


def _gather(resp, result) -> bytes:
    """The response as gunicorn's ``Response`` writes it (head, then body), in one
    piece: one system call instead of two."""
    gathered = _Gathered()
    real, resp.sock = resp.sock, gathered
    try:
        for chunk in result:
            resp.write(chunk)
        resp.close()
    finally:
        resp.sock = real
        close = getattr(result, "close", None)
        if close is not None:
            close()
    return b"".join(gathered.pieces)


def _send_file(resp, wrapper) -> None:
    try:
        resp.write_file(wrapper)
        resp.close()
    finally:
        wrapper.close()


class _Gathered:
    """Stands for the socket while gunicorn's ``Response`` writes a response to it."""

    def __init__(self):
        self.pieces: list[bytes] = []

    def sendall(self, data: bytes) -> None:
        self.pieces.append(data)
