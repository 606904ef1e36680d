"""The gunicorn worker of ``hitboard serve``: no thread waits on a client.

gunicorn's threaded worker gives a connection a thread from its first byte, so eight
clients sending their headers a byte at a time hold its eight threads (slowloris). Here
gevent's hub owns every socket and waits for it; once bytes have come, a thread parses
them (``received``) and, when the request is all there, serves it, writing the response
as far as the socket takes it without waiting. A request not all there goes back to the
hub, whose greenlet reads its head within ``header_timeout`` and its body within
``body_timeout`` and its route's size limit (refused with 413 by its Content-Length
before a byte of it is read), and only then hands it to a thread. Nothing is
monkey-patched: the app (pymongo, sqlite3, the recorders' threads, pandas) runs in
ordinary threads as under gthread, so a CPU-bound History render or a flush to SQLite
never stops the hub. ``/hit`` and ``/healthz`` have threads of their own (``lanes``):
they never queue behind Dash callbacks.
"""

from __future__ import annotations

import json
import os
import socket
import time
from datetime import datetime

import gevent
from gevent import socket as gsocket
from gunicorn import http, util
from gunicorn.http import wsgi
from gunicorn.workers.ggevent import GeventWorker

from ..settings import resolve
from .lanes import Lane
from .limits import BodyTooLarge, Limits, fix_mmap_threshold, read_body
from .received import Incomplete, Received, expects_continue

QUICK_PATHS = frozenset({"/hit", "/hit.js", "/healthz"})
LINGER_SECONDS = 1.0            # a refused client's unread bytes are drained this long,
LINGER_BYTES = 1024 * 1024      # or this many, so that it reads the refusal (not a reset)


class BodyTimeout(Exception):
    """The client took longer than ``body_timeout`` to send a request's body."""


class Served:
    """A request parsed, its body read, perhaps answered: what the hub finishes."""

    def __init__(self, req, resp, environ, body, rest=None, started=None):
        self.req, self.resp, self.wsgi_env, self.body = req, resp, environ, body
        self.rest, self.started = rest, started or datetime.now()


class FrontDoorWorker(GeventWorker):
    """``worker_class`` of ``hitboard serve``; with plain gunicorn:
    ``gunicorn -k dashboard.frontdoor.worker.FrontDoorWorker "dashboard:create_server()"``
    (settings from ``HITBOARD_*`` then)."""

    def patch(self) -> None:
        # Only the listening sockets become gevent's: nothing else is monkey-patched.
        self.sockets = [gsocket.socket(s.FAMILY, socket.SOCK_STREAM, fileno=s.sock.detach())
                        for s in self.sockets]

    def run(self) -> None:
        fix_mmap_threshold()
        settings = getattr(self.app, "hitboard_settings", None) or resolve()
        self.limits = Limits.from_settings(settings)
        self.quick = Lane(settings.threads, "quick")
        self.pages = Lane(settings.threads, "pages")
        try:
            super().run()
        finally:
            self.quick.close()
            self.pages.close()

    def handle(self, listener, client, addr) -> None:
        """One connection, request after request, until it closes or idles past
        ``header_timeout``."""
        parser = http.get_parser(self.cfg, client, addr)
        parser.unreader = Received(client)
        name = listener.getsockname()
        try:
            while self.alive:
                if not parser.unreader.pending() and not _readable(
                        client, self.limits.header_timeout):
                    break                   # idle past the deadline
                start = time.monotonic()    # the head is due header_timeout from here
                served = self.quick.run(self._try_in_thread, parser, client, addr, name)
                if served is None:                   # not all there: the hub reads it
                    served = self._read_on_hub(parser, client, addr, name, start)
                    if served is None:
                        break
                if not self._finish(served, client):
                    break
        except (http.errors.NoMoreData, StopIteration, ConnectionError):
            pass
        except OSError as exc:
            self.log.debug("Socket error: %s", exc)
        except Exception as exc:
            self.handle_error(None, client, addr, exc)
        finally:
            util.close(client)

    def _try_in_thread(self, parser, client, addr, name) -> Served | None:
        """In a thread: the next request if it is all there (answered, if it is one of
        the quick lane's), else None and every byte put back for the hub."""
        fd = os.dup(client.fileno())
        before = parser.mesg, parser.req_count
        try:
            with parser.unreader.reading_from(fd):
                req = next(parser)
                if expects_continue(req):
                    raise Incomplete
                limit = self.limits.body_limit(req.path)
                if _declared_length(req) > limit:
                    return self._refusal(req, BodyTooLarge(limit))
                resp, environ = wsgi.create(req, client, addr, name, self.cfg)
                body = _buffer_body(environ, req, limit)
            served = Served(req, resp, environ, body)
            if req.path in QUICK_PATHS:
                self._count(served)
                served.rest = _respond(self.wsgi, environ, resp, fd)
            return served
        except Incomplete:
            parser.mesg, parser.req_count = before
            return None
        except BodyTooLarge as exc:
            return self._refusal(None, exc)
        finally:
            os.close(fd)

    def _read_on_hub(self, parser, client, addr, name, start) -> Served | None:
        """The request a slow client sends, read by this greenlet within the deadlines
        (None: the head did not come in time)."""
        remaining = max(0.0, start + self.limits.header_timeout - time.monotonic())
        req = None
        with gevent.Timeout(remaining, False):
            req = next(parser)
        if req is None:
            return None
        limit = self.limits.body_limit(req.path)
        if _declared_length(req) > limit:
            self._refuse(client, 413, "Content Too Large", str(BodyTooLarge(limit)))
        resp, environ = wsgi.create(req, client, addr, name, self.cfg)   # 100 Continue
        try:
            with gevent.Timeout(self.limits.body_timeout, BodyTimeout):
                body = _buffer_body(environ, req, limit)
        except BodyTooLarge as exc:
            self._refuse(client, 413, "Content Too Large", str(exc))
        except BodyTimeout:
            self._refuse(client, 408, "Request Timeout", f"the body did not arrive within "
                         f"{self.limits.body_timeout:g} seconds")
        return Served(req, resp, environ, body)

    def _finish(self, served: Served, client) -> bool:
        """Run the app if no thread has, send what is left; whether to keep the
        connection for another request."""
        if served.resp is None:                  # refused in the thread: 413
            self._refuse(client, 413, "Content Too Large", served.rest)
        resp, environ = served.resp, served.wsgi_env
        try:
            if served.rest is None:
                self._count(served)
                lane = self.quick if served.req.path in QUICK_PATHS else self.pages
                served.rest = lane.run(_run_app, self.wsgi, environ, resp,
                                       os.dup(client.fileno()))
            if isinstance(served.rest, environ["wsgi.file_wrapper"]):
                try:
                    resp.write_file(served.rest)
                    resp.close()
                finally:
                    served.rest.close()
            elif served.rest:
                client.sendall(served.rest)
        except Exception:
            if resp.headers_sent:
                self.log.exception("Error handling request")
                return False
            raise
        finally:
            if served.body is not None:
                served.body.close()
            self.log.access(resp, served.req, environ, datetime.now() - served.started)
            try:
                self.cfg.post_request(self, served.req, environ, resp)
            except Exception:
                self.log.exception("Exception in post_request hook")
        return not resp.should_close()

    def _count(self, served: Served) -> None:
        """What gunicorn does before each request: hooks, the request count."""
        self.cfg.pre_request(self, served.req)
        served.wsgi_env["wsgi.multithread"] = True
        self.nr += 1
        if self.nr >= self.max_requests and self.alive:
            self.log.info("Autorestarting worker after current request.")
            self.alive = False
        if not self.alive or not self.cfg.keepalive:
            served.resp.force_close()

    @staticmethod
    def _refusal(req, exc: BodyTooLarge) -> Served:
        return Served(req, None, None, None, rest=str(exc))

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


def _readable(sock, timeout: float) -> bool:
    """Wait until the client sends something, at most ``timeout`` seconds."""
    try:
        gsocket.wait_read(sock.fileno(), timeout=timeout, timeout_exc=TimeoutError)
    except TimeoutError:
        return False
    return True


def _declared_length(req) -> int:
    """The body's Content-Length (gunicorn has checked it is one decimal number), 0
    without one."""
    for name, value in req.headers:
        if name == "CONTENT-LENGTH":
            return int(value)
    return 0


def _buffer_body(environ: dict, req, limit: int):
    """Read the whole body now (the app then reads a file, never the socket), described
    as a body of known length, chunked or not; the file, or None without a body."""
    if "CONTENT_LENGTH" not in environ and "HTTP_TRANSFER_ENCODING" not in environ:
        return None                 # gunicorn's reader of zero bytes stays
    body, size = read_body(req.body, limit)
    environ["wsgi.input"] = body
    environ["CONTENT_LENGTH"] = str(size)
    environ.pop("HTTP_TRANSFER_ENCODING", None)
    return body


def _run_app(app, environ: dict, resp, fd: int):
    """:func:`_respond` in a thread of a lane, ``fd`` closed afterwards."""
    try:
        return _respond(app, environ, resp, fd)
    finally:
        os.close(fd)


def _respond(app, environ: dict, resp, fd: int):
    """The WSGI call, and its response written to the socket (``fd``, a copy of its
    descriptor: should the hub close the socket meanwhile, the number is not reused) as
    far as it goes without waiting. Returns what is left to send, or the server's file
    wrapper: the hub sends them."""
    result = app(environ, resp.start_response)
    if isinstance(result, environ["wsgi.file_wrapper"]):
        return result
    data = _gather(resp, result)
    try:
        sent = os.write(fd, data)
    except BlockingIOError:
        sent = 0
    return memoryview(data)[sent:]


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


class _Gathered:
    """Stands for the socket while gunicorn's ``Response`` writes a response to it."""

    def __init__(self):
        self.pieces: list[bytes] = []

    def sendall(self, data: bytes) -> None:
        self.pieces.append(data)
