"""Shared by the fault tests: a wire server of one's own, a faulty TCP proxy in front of
it, bounded waits, and the hits a site holds in the statistics."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections import Counter

import pytest
import wire_server
from pymongo.errors import PyMongoError

import queries
from queries.stats import schema

WAIT = 30.0


def start_server(tmp_path) -> wire_server.WireServer:
    """A wire server of its own on SQLite, so a killed one restarts with its data."""
    reason = wire_server.unavailable()
    if reason:
        pytest.skip(reason)
    return wire_server.WireServer(tmp_path / "data", tmp_path / "server.log").start()


def connect(port: int, **options):
    query = "&".join(f"{key}={value}" for key, value in options.items())
    return queries.connect(f"mongodb://127.0.0.1:{port}/faults?{query}")


def wait_for(predicate, what: str, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.01)


def counted(db, site: str) -> tuple[Counter, Counter]:
    """Hits stored per page: (daily documents, monthly documents)."""
    daily, monthly = Counter(), Counter()
    for coll, field, into in ((schema.DAILY, "daily", daily), (schema.MONTHLY, "monthly", monthly)):
        for doc in db[coll].find({"metadata.site": site}, {"metadata.page": 1, field: 1}):
            into[doc["metadata"]["page"]] += doc.get(field, 0)
    return daily, monthly


def expected(sent: Counter) -> Counter:
    return Counter({**sent, "*": sum(sent.values())})


def drain(recorder, timeout: float = WAIT) -> None:
    """Flush until nothing is pending (the server may still be coming back)."""
    deadline = time.monotonic() + timeout
    while recorder.status().pending_hits:
        try:
            recorder.flush()
        except PyMongoError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


class FaultyProxy:
    """A TCP proxy on loopback in front of the wire server. It delays every reply by
    ``latency`` seconds, and :meth:`cut_after_next_update` closes the connection that
    carries the next ``update`` command as soon as the server has answered it: the write
    is applied, the client never hears so (the outcome-unknown case)."""

    def __init__(self, target_port: int):
        self.target_port = target_port
        self.latency = 0.0
        self._cut = threading.Event()
        self._sockets: list[socket.socket] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def cut_after_next_update(self) -> None:
        self._cut.set()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                return
            self._sockets += [client, upstream]
            doomed = threading.Event()
            threading.Thread(target=self._requests, args=(client, upstream, doomed),
                             daemon=True).start()
            threading.Thread(target=self._replies, args=(upstream, client, doomed),
                             daemon=True).start()

    def _requests(self, client, upstream, doomed) -> None:
        # An OP_MSG update command starts its body with the string element "update".
        while chunk := self._recv(client):
            if self._cut.is_set() and b"\x02update\x00" in chunk:
                self._cut.clear()
                doomed.set()
            if not self._send(upstream, chunk):
                break
        self._close(client, upstream)

    def _replies(self, upstream, client, doomed) -> None:
        while chunk := self._recv(upstream):
            if doomed.is_set():
                break
            time.sleep(self.latency)
            if not self._send(client, chunk):
                break
        self._close(client, upstream)

    @staticmethod
    def _recv(sock) -> bytes:
        try:
            return sock.recv(1 << 16)
        except OSError:
            return b""

    @staticmethod
    def _send(sock, data: bytes) -> bool:
        try:
            sock.sendall(data)
            return True
        except OSError:
            return False

    @staticmethod
    def _close(*socks) -> None:
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def close(self) -> None:
        self._listener.close()
        self._close(*self._sockets)
