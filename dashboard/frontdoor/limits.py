"""How much of a request is read, and for how long.

Each route has a body limit: ``/hit`` a beacon's few hundred bytes; Dash's callback
endpoint its largest legitimate body (the History CSV, posted back to be downloaded:
3.4 MB for 20,000 points of 10 pages and their comparison); anything else, the APIs'
JSON. Every request has a deadline for its head and one for its body. A body is read
into memory up to ``SPOOL_BYTES``, past that into a temporary file, so many uploads at
once cost disk rather than memory.

Large blocks come from the kernel and go straight back to it (:func:`fix_mmap_threshold`),
so a worker's memory follows what it holds. glibc serves a block of 128 KiB or more with
its own mmap, returned when freed, but raises that threshold (up to 32 MiB) each time such
a block is freed: after a few History renders every chart's frame, pickle and JSON came
from the heap, where freed blocks between live ones are never given back. Under a flood
of distinct 2-day minute views, with the result cache bounded at
64 MiB, the worker grew 136 → 368 → 417 MB after 200 and 400 views; with the threshold
fixed, 131 → 287 → 298 MB.
"""

from __future__ import annotations

import ctypes
import io
import tempfile
from dataclasses import dataclass
from typing import IO, Protocol
from urllib.parse import unquote

BEACON_PATH = "/hit"
CALLBACK_PATH = "/_dash-update-component"
SPOOL_BYTES = 64 * 1024
READ_BYTES = 64 * 1024
M_MMAP_THRESHOLD = -3                       # glibc's malloc.h
MMAP_THRESHOLD = 128 * 1024                 # glibc's default, kept fixed


class Readable(Protocol):
    def read(self, size: int) -> bytes: ...


class BodyTooLarge(Exception):
    """A body longer than its route accepts, by its Content-Length or as it arrives."""

    def __init__(self, limit: int):
        super().__init__(f"the body of a request to this address may be at most "
                         f"{limit:,} bytes")
        self.limit = limit


@dataclass(frozen=True)
class Limits:
    header_timeout: float
    body_timeout: float
    beacon_body: int
    callback_body: int
    body: int

    @classmethod
    def from_settings(cls, settings) -> Limits:
        return cls(header_timeout=settings.header_timeout,
                   body_timeout=settings.body_timeout,
                   beacon_body=settings.beacon_max_body,
                   callback_body=settings.callback_max_body,
                   body=settings.max_body)

    def body_limit(self, path: str) -> int:
        """The most bytes a request to ``path`` may carry; ``path`` as sent
        (percent-encoded) or as Flask routes it (decoded)."""
        path = unquote(path, errors="replace")
        if path == BEACON_PATH:
            return self.beacon_body
        if path == CALLBACK_PATH:
            return self.callback_body
        return self.body


def read_body(stream: Readable, limit: int) -> tuple[IO[bytes], int]:
    """All of ``stream`` as a file positioned at its start, and its size; raises
    :class:`BodyTooLarge` once more than ``limit`` bytes have come, having read at most
    one byte past it."""
    spooled, size = None, 0
    while piece := stream.read(min(READ_BYTES, limit + 1 - size)):
        size += len(piece)
        if size > limit:
            raise BodyTooLarge(limit)
        if spooled is None:
            spooled = tempfile.SpooledTemporaryFile(SPOOL_BYTES)  # noqa: SIM115 (returned)
        spooled.write(piece)
    if spooled is None:
        return io.BytesIO(), 0
    spooled.seek(0)
    return spooled, size


def fix_mmap_threshold(threshold: int = MMAP_THRESHOLD) -> bool:
    """Fix glibc's mmap threshold at ``threshold`` bytes (this overrides glibc's
    ``MALLOC_MMAP_THRESHOLD_``); False where there is no glibc (musl, macOS)."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt(M_MMAP_THRESHOLD, threshold) == 1
