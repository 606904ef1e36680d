"""A log file cut into chunks of lines to map (``queries.ingest.mapper``): one tally
merged per chunk, its events inserted at once.

Cut by bytes, after a newline: the lines themselves are split where they are mapped, so
the ingest process, which merges and flushes, reads a 500,000-line log in a few reads.
"""

from __future__ import annotations

CHUNK_BYTES = 12 * 2**20


def chunk_bytes(size: int) -> int:
    """The bytes of each chunk of ``size``: at most CHUNK_BYTES, in an even number of
    chunks of one size, so two or four worker processes end together rather than one
    mapping the last chunk alone. The same whatever the number of processes: a log
    makes the same store with any ``jobs`` (the dimensions' capped counters keep the
    values their batch meets first, and batches end where chunks do)."""
    pairs = max(1, -(-size // (2 * CHUNK_BYTES)))
    return max(1, -(-size // (2 * pairs)))


def tasks(handle, start: int, size: int, default_site: str, stream: int):
    """The lines of bytes ``[start, size)`` of the file ``handle`` as mapping tasks
    (``(data, start, default_site, stream)``, labelled with the offset after their last
    line) of about :func:`chunk_bytes` each, cut after a newline."""
    chunk = chunk_bytes(size - start)
    handle.seek(start)
    buffer = b""
    while start + len(buffer) < size:
        block = handle.read(min(chunk, size - start - len(buffer)))
        if not block:
            break
        buffer += block
        cut = buffer.rfind(b"\n") + 1
        if cut:                         # else one line longer than a chunk: read on
            yield start + cut, (buffer[:cut], start, default_site, stream)
            buffer, start = buffer[cut:], start + cut
    if buffer:                          # the range's last line, perhaps partial
        yield start + len(buffer), (buffer, start, default_site, stream)
