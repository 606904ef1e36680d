"""A log file cut into chunks of lines to map (``queries.ingest.mapper``): one tally
merged per chunk, its events inserted at once.

Cut by bytes, after a newline: the lines themselves are split where they are mapped, so
the ingest reads a 500,000-line log in a few reads. Memory stays bounded whatever the
file holds: a line longer than ``MAX_LINE_BYTES`` (no server writes one: a request line
and each header are ~8 KB at most) is never held whole, but skipped as it is read and
handed on as a :class:`Chunk` without data, which the run counts as one line refused
(``TOO_LONG``); a file with no newline at all is read through in bounded steps the same
way, the holes of a sparse file passed over.
"""

from __future__ import annotations

import errno
import os
from typing import NamedTuple

# A chunk's frames are held while it is mapped, beside the tally of the chunk before (the
# run maps one ahead): on the 200,000-line long tail with the Polars mapper, 4 MiB chunks
# rather than 12 took the ingest's own peak RSS from 721 to 590 MB. A log under 8 MiB is
# cut in two chunks either way.
CHUNK_BYTES = 4 * 2**20
MAX_LINE_BYTES = 2**20
TOO_LONG = "too_long"


class Chunk(NamedTuple):
    """Bytes ``[start, end)`` of the file: whole lines (``data``), or one line longer
    than ``MAX_LINE_BYTES`` (``data`` None)."""

    start: int
    end: int
    data: bytes | None


def chunk_bytes(size: int) -> int:
    """The bytes of each chunk of ``size``: at most CHUNK_BYTES, in an even number of
    chunks of one size (as when worker processes mapped them two by two: a log makes
    the same store as it did, since the dimensions' capped counters keep the values
    their batch meets first, and batches end where chunks do)."""
    pairs = max(1, -(-size // (2 * CHUNK_BYTES)))
    return max(1, -(-size // (2 * pairs)))


def read(handle, start: int, size: int, chunk: int | None = None):
    """The :class:`Chunk` s of bytes ``[start, size)`` of the file ``handle``, of about
    ``chunk`` bytes each (:func:`chunk_bytes` by default), cut after a newline; a range
    that does not end with one ends with its last line, perhaps partial."""
    chunk = chunk or chunk_bytes(size - start)
    handle.seek(start)
    buffer = b""
    while start + len(buffer) < size:
        block = handle.read(min(chunk, size - start - len(buffer)))
        if not block:
            break
        buffer += block
        cut = buffer.rfind(b"\n") + 1
        if cut:
            yield from _lines(buffer[:cut], start)
            buffer, start = buffer[cut:], start + cut
        if len(buffer) > MAX_LINE_BYTES:        # the start of a line too long: skip it
            end = _skip_line(handle, start + len(buffer), size)
            yield Chunk(start, end, None)
            handle.seek(end)
            buffer, start = b"", end
    if buffer:
        yield from _lines(buffer, start)


def _lines(data: bytes, start: int):
    """``data`` (whole lines, read from byte ``start``) as chunks, its lines longer than
    ``MAX_LINE_BYTES`` apart. A step of the search reaches the last newline within
    ``MAX_LINE_BYTES`` ahead, so it takes a few steps a chunk."""
    at = line = 0                     # the first byte not yet handed on; a line's start
    while len(data) - line > MAX_LINE_BYTES:
        newline = data.rfind(b"\n", line, line + MAX_LINE_BYTES + 1)
        if newline >= 0:
            line = newline + 1
            continue
        end = data.find(b"\n", line) + 1 or len(data)
        if line > at:
            yield Chunk(start + at, start + line, data[at:line])
        yield Chunk(start + line, start + end, None)
        at = line = end
    if at < len(data):
        yield Chunk(start + at, start + len(data), data[at:] if at else data)


def _skip_line(handle, offset: int, size: int, step: int = 2**20) -> int:
    """Where the line that runs on at ``offset`` ends: after its newline, else at
    ``size``; read ``step`` bytes at a time into one buffer, none of them kept. A hole
    of a sparse file (NULs, as a crash can leave in a log) is passed over unread."""
    buffer = bytearray(step)
    while offset < size:
        offset = _data_from(handle, offset, size)
        handle.seek(offset)
        got = handle.readinto(buffer)
        if not got:
            break
        newline = buffer.find(b"\n", 0, got)
        if newline >= 0:
            return offset + newline + 1
        offset += got
    return min(offset, size)


def _data_from(handle, offset: int, size: int) -> int:
    """The first byte at or after ``offset`` not in a hole (``size`` if none is)."""
    if not hasattr(os, "SEEK_DATA"):
        return offset
    try:
        return os.lseek(handle.fileno(), offset, os.SEEK_DATA)
    except OSError as exc:
        return size if exc.errno == errno.ENXIO else offset
