"""The first embedded store's on-disk format, read once to convert it (``migrate.py``).

That store kept ``snapshot.bson`` (a header record, then ``{db, c, d}`` document records)
and ``journal-G.bson`` (one ``{db, c, op, a, k}`` record per write applied since snapshot
G). Opening replayed the journal matching the snapshot's generation over the snapshot; a
torn last record (a crash mid-append) was ignored.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import bson
from bson.codec_options import CodecOptions

CODEC = CodecOptions(tz_aware=True)
SNAPSHOT = "snapshot.bson"


def journal_path(directory: Path, generation: int) -> Path:
    return directory / f"journal-{generation}.bson"


def present(directory: Path) -> bool:
    return (directory / SNAPSHOT).exists() or any(directory.glob("journal-*.bson"))


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


def read_journal(path: Path) -> Iterator[dict]:
    """Every complete record; a torn tail is ignored."""
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
