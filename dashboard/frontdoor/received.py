"""A request parsed in a thread when it has all arrived, on the hub when it has not.

Most requests arrive whole, in one packet. Parsing every one on gevent's hub made it the
server's bottleneck: one thread doing ~0.3 ms of Python per request for every
connection. So a thread tries first: it reads what the socket holds, without waiting,
and parses it; a request that is all there goes on in that thread. One that is not
(a slow client, a body still coming, an ``Expect: 100-continue``) goes back to the hub
with every byte read, and the hub reads the rest within the deadlines.
"""

from __future__ import annotations

import io
import os
from contextlib import contextmanager

from gunicorn.http.unreader import Unreader

READ_BYTES = 64 * 1024


class Incomplete(Exception):
    """The bytes received so far end before the request does."""


class Received(Unreader):
    """The source of gunicorn's parser for one connection: its gevent socket on the hub;
    in a thread, inside :meth:`reading_from`, what the socket holds now."""

    def __init__(self, sock):
        super().__init__()
        self._socket = sock     # not ``sock``: gunicorn would set its timeout from a thread
        self._fd: int | None = None
        self._journal: list[bytes] = []

    def chunk(self, size_hint=None) -> bytes:
        if self._fd is None:
            return self._socket.recv(max(8192, min(size_hint or 0, 1024 * 1024)))
        try:
            data = os.read(self._fd, READ_BYTES)     # the socket does not block
        except BlockingIOError:
            raise Incomplete from None
        self._journal.append(data)
        return data

    def pending(self) -> bool:
        """Whether bytes already read wait to be parsed (a pipelined request)."""
        return self.buf.getbuffer().nbytes > 0

    @contextmanager
    def reading_from(self, fd: int):
        """Read ``fd`` (a copy of the socket's descriptor) instead of the socket; on
        :class:`Incomplete` every byte this source held or read is put back."""
        held = self.take_buffered()
        self.unread(held)
        self._fd, self._journal = fd, [held]
        try:
            yield
        except Incomplete:
            self.buf = io.BytesIO()
            self.buf.write(b"".join(self._journal))
            raise
        finally:
            self._fd, self._journal = None, []


def expects_continue(req) -> bool:
    """Whether the client waits for ``100 Continue`` before it sends the body (the hub
    sends it, when the body is not refused)."""
    return any(name == "EXPECT" for name, _ in req.headers)
