"""How much of a request is read, and for how long.

Each route has a body limit: ``/hit`` a beacon's few hundred bytes; Dash's callback
endpoint its largest legitimate body (the History CSV, posted back to be downloaded:
3.4 MB for 20,000 points of 10 pages and their comparison); anything else, the APIs'
JSON. Every request has a deadline for its head and one for its body. A body is read
into memory up to ``SPOOL_BYTES``, past that into a temporary file, so many uploads at
once cost disk rather than memory.
"""

from __future__ import annotations

import io
import tempfile
from dataclasses import dataclass
from typing import IO, Protocol
from urllib.parse import unquote

BEACON_PATH = "/hit"
CALLBACK_PATH = "/_dash-update-component"
SPOOL_BYTES = 64 * 1024
READ_BYTES = 64 * 1024


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
