"""Hostile clients of a real ``hitboard serve`` (the front-door tests and
``bench/serve.py``): slow senders, raw requests, huge bodies, and the server's memory.

Every wait is bounded and every client talks to 127.0.0.1 only.
"""

from __future__ import annotations

import os
import select
import socket
import statistics
import threading
import time
from collections import Counter
from pathlib import Path

SLOW_HEAD = b"GET /healthz HTTP/1.1\r\nHost: slow\r\nX-Slow: "
SLOW_BODY = (b"POST /hit HTTP/1.1\r\nHost: slow\r\nContent-Type: text/plain\r\n"
             b"Content-Length: 4000\r\n\r\n")


class SlowClients:
    """``heads`` clients sending a request head and ``bodies`` sending a body, each a
    byte every ``interval`` seconds, from one thread; one the server cuts off connects
    again, so the pressure stays. ``cut`` counts the connections the server closed,
    ``statuses`` the status codes it answered them with (a 408, say)."""

    def __init__(self, port: int, heads: int = 0, bodies: int = 0, interval: float = 1.0):
        self.port, self.interval = port, interval
        self.kinds = [SLOW_HEAD] * heads + [SLOW_BODY] * bodies
        self.cut, self.statuses = 0, Counter()
        self._socks: list[socket.socket | None] = [None] * len(self.kinds)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="slow-clients", daemon=True)

    def __enter__(self) -> SlowClients:
        for i in range(len(self.kinds)):
            self._connect(i)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(30)
        for sock in self._socks:
            if sock is not None:
                sock.close()

    @property
    def connected(self) -> int:
        return sum(sock is not None for sock in self._socks)

    def _connect(self, i: int) -> None:
        try:
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=30)
            sock.sendall(self.kinds[i])
            sock.setblocking(False)
            self._socks[i] = sock
        except OSError:
            self._socks[i] = None

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            for i, sock in enumerate(self._socks):
                if sock is None or self._answered(sock):
                    if sock is not None:
                        sock.close()
                        self.cut += 1
                    self._connect(i)
                    continue
                try:
                    sock.send(b"a")
                except OSError:
                    sock.close()
                    self.cut += 1
                    self._connect(i)

    def _answered(self, sock: socket.socket) -> bool:
        """Whether the server answered or closed this connection (its answer noted)."""
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return False
        try:
            data = sock.recv(4096)
        except OSError:
            return True
        if data.startswith(b"HTTP/1.1 "):
            self.statuses[int(data[9:12])] += 1
        return True


def request(port: int, raw: bytes, timeout: float = 10.0) -> tuple[int | None, bytes]:
    """Send ``raw`` bytes on a fresh connection; (status, whole answer) once the server
    closes it or ``timeout`` passes (status None: no answer)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(raw)
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline and (data := sock.recv(65536)):
                answer += data
        except OSError:
            pass
    status = int(answer[9:12]) if answer.startswith(b"HTTP/1.") else None
    return status, answer


def huge_body(port: int, path: str, size: int, chunked: bool = False,
              timeout: float = 20.0) -> int | None:
    """POST ``size`` bytes of body to ``path`` (declared by Content-Length, or sent in
    1 MiB chunks), sending from a thread while the answer is read; its status, or None
    when the server closed the connection without one."""
    head = f"POST {path} HTTP/1.1\r\nHost: huge\r\nContent-Type: application/json\r\n"
    head += "Transfer-Encoding: chunked\r\n\r\n" if chunked else f"Content-Length: {size}\r\n\r\n"
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    piece = b"x" * (1024 * 1024)

    def send() -> None:
        try:
            sock.sendall(head.encode())
            for _ in range(size // len(piece)):
                sock.sendall(b"100000\r\n" + piece + b"\r\n" if chunked else piece)
            if chunked:
                sock.sendall(b"0\r\n\r\n")
        except OSError:
            pass                                  # refused: the server stopped reading

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    try:
        answer = sock.recv(4096)
    except OSError:
        answer = b""
    finally:
        sock.close()
        sender.join(timeout)
    return int(answer[9:12]) if answer.startswith(b"HTTP/1.") else None


def timed_get(port: int, path: str, timeout: float = 5.0) -> float | None:
    """Seconds a GET of ``path`` takes on a fresh connection (None: no 2xx answer)."""
    started = time.perf_counter()
    try:
        status, _ = request(port, f"GET {path} HTTP/1.1\r\nHost: probe\r\n"
                                  f"Connection: close\r\n\r\n".encode(), timeout)
    except OSError:
        return None
    return time.perf_counter() - started if status is not None and status < 300 else None


def p99(seconds: list[float]) -> float:
    if len(seconds) < 2:
        return max(seconds, default=float("nan"))
    return statistics.quantiles(seconds, n=100, method="inclusive")[98]


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def rss_kib(pid: int) -> int:
    """A process's resident memory, KiB (``VmRSS``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise ValueError(f"no VmRSS for process {pid}")


def has_proc() -> bool:
    return os.path.exists("/proc/self/status")
