"""On-disk format of the embedded store: a snapshot plus an append-only journal.

``snapshot.bson`` holds every document as of generation G (a header record first);
``journal-G.bson`` holds every write applied since, one BSON record per operation,
flushed to the OS before the write returns. Opening replays the journal over the
snapshot. Compaction writes snapshot G+1 to a temporary file, renames it into place
(atomic), then starts journal G+1 and deletes journal G. A crash at any point leaves
either (snapshot G, journal G) or (snapshot G+1, journal G+1 possibly empty): the
journal matching the snapshot's generation is the only one ever replayed, so no write
is applied twice. A torn last record (crash mid-append) is cut off on open.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import bson
from bson.codec_options import CodecOptions

CODEC = CodecOptions(tz_aware=True)
SNAPSHOT = "snapshot.bson"


def journal_path(directory: Path, generation: int) -> Path:
    return directory / f"journal-{generation}.bson"


def read_snapshot(directory: Path) -> tuple[dict, Iterator[dict]]:
    """The header and an iterator over ``{"db", "c", "d"}`` document records."""
    path = directory / SNAPSHOT
    if not path.exists():
        return {"generation": 0, "indexes": []}, iter(())
    handle = path.open("rb")
    records = bson.decode_file_iter(handle, codec_options=CODEC)
    header = next(records)

    def documents() -> Iterator[dict]:
        with handle:
            yield from records

    return header, documents()


def snapshot_generation(directory: Path) -> int:
    path = directory / SNAPSHOT
    if not path.exists():
        return 0
    with path.open("rb") as handle:
        return next(bson.decode_file_iter(handle, codec_options=CODEC))["generation"]


def write_snapshot(directory: Path, header: dict, documents: Iterator[dict]) -> None:
    """Write atomically: a reader sees the old snapshot or the complete new one."""
    tmp = directory / (SNAPSHOT + ".tmp")
    with tmp.open("wb") as out:
        out.write(bson.encode(header))
        for record in documents:
            out.write(bson.encode(record))
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, directory / SNAPSHOT)
    _fsync_dir(directory)


def read_journal(path: Path, repair: bool = True) -> Iterator[dict]:
    """Every complete record. With ``repair`` a torn tail is cut so later appends stay
    readable; a read-only reader of a live journal passes ``repair=False``."""
    if not path.exists():
        return
    data = path.read_bytes()
    offset = 0
    while offset + 4 <= len(data):
        size = int.from_bytes(data[offset : offset + 4], "little", signed=True)
        if size < 5 or offset + size > len(data):
            break
        yield bson.decode(data[offset : offset + size], codec_options=CODEC)
        offset += size
    if repair and offset < len(data):
        with path.open("r+b") as handle:
            handle.truncate(offset)


class JournalWriter:
    """Appends operation records; each append reaches the OS before it returns."""

    def __init__(self, path: Path, fsync: bool = False):
        self.path = path
        self._fsync = fsync
        self._handle = path.open("ab")

    def append(self, record: dict) -> None:
        self._handle.write(bson.encode(record))
        self._handle.flush()
        if self._fsync:
            os.fsync(self._handle.fileno())

    def size(self) -> int:
        return self._handle.tell()

    def close(self) -> None:
        self._handle.close()


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
