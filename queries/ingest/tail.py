"""Reading log files line by line, once or like ``tail -F``. Pure: files only, no database.

Offsets are byte offsets just past the last *complete* line consumed, so a line a writer
has only half written is read when its newline arrives, and a saved offset always
resumes on a line boundary. Each ``Follower.read()`` returns lines of one file only, so
its caller can tell which bytes of which file every line came from (ingest's checkpoints
replay exactly those bytes after a crash).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass

HEAD_BYTES = 256


@dataclass(frozen=True)
class FileId:
    """Which file: device and inode (a renamed file keeps them) plus the path followed."""

    device: int
    inode: int
    path: str

    @property
    def key(self) -> str:
        return f"{self.device}:{self.inode}:{self.path}"


def file_id(path: str | os.PathLike, stat: os.stat_result | None = None) -> FileId:
    stat = stat or os.stat(path)
    return FileId(stat.st_dev, stat.st_ino, os.path.abspath(path))


def head_digest(handle) -> str:
    """A digest of the first line (at most 256 bytes): tells a file from another that
    reuses its inode. Empty until that first line is complete."""
    position = handle.tell()
    handle.seek(0)
    first = handle.readline(HEAD_BYTES)
    handle.seek(position)
    if not first.endswith(b"\n") and len(first) < HEAD_BYTES:
        return ""
    return hashlib.sha1(first).hexdigest()


def read_range(handle, start: int, end: int) -> Iterator[tuple[bytes, int]]:
    """The lines of bytes ``[start, end)`` of an open file and the offset after each,
    streamed (never the whole file); the last may lack its newline."""
    handle.seek(start)
    while start < end:
        line = handle.readline(end - start)
        if not line:
            return
        start += len(line)
        yield line, start


def find_file(path: str, device: int, inode: int, head: str):
    """Open the file with this identity and first line: at ``path``, else renamed within
    its directory (``access.log.1`` after a rotation); None when it is gone."""
    folder = os.path.dirname(path)
    try:
        names = [path, *(entry.path for entry in os.scandir(folder))]
    except OSError:
        names = [path]
    for name in names:
        try:
            stat = os.stat(name)
            if (stat.st_dev, stat.st_ino) != (device, inode):
                continue
            handle = open(name, "rb")  # noqa: SIM115 - returned to the caller
        except OSError:
            continue
        if head_digest(handle) == head:
            return handle
        handle.close()
    return None


class Follower:
    """Follows one path across rotation, like ``tail -F``.

    ``read()`` returns the complete lines available now, all from the file ``id`` names
    after the call, ending at ``offset``. At end of file it checks the path: renamed away
    and re-created (``logrotate``'s default) → the rest of the old file is returned (its
    last line even unfinished), then the next call reads the new one from its start;
    truncated in place (``copytruncate``) → it starts again at 0; missing for a moment →
    it keeps waiting.
    """

    def __init__(self, path: str | os.PathLike, offset: int = 0):
        self.path = os.path.abspath(path)
        self._handle = open(self.path, "rb")  # noqa: SIM115 - held across calls
        stat = os.fstat(self._handle.fileno())
        self.id = file_id(self.path, stat)
        self.offset = offset if offset <= stat.st_size else 0
        self._handle.seek(self.offset)

    def head(self) -> str:
        return head_digest(self._handle)

    def size(self) -> int:
        return os.fstat(self._handle.fileno()).st_size

    def seek(self, offset: int) -> None:
        """Read on from ``offset``, a line boundary (a saved position)."""
        self._handle.seek(offset)
        self.offset = offset

    def read(self, max_lines: int = 5000) -> list[bytes]:
        lines = self._complete_lines(max_lines)
        if not lines:
            lines = self._after_eof(max_lines)
        return lines

    def _complete_lines(self, max_lines: int, final: bool = False) -> list[bytes]:
        lines = []
        while len(lines) < max_lines:
            line = self._handle.readline()
            if not line:
                break
            if not line.endswith(b"\n") and not final:
                self._handle.seek(self.offset)   # half written: wait for its newline
                break
            self.offset += len(line)
            lines.append(line)
        return lines

    def _after_eof(self, max_lines: int) -> list[bytes]:
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            return []                          # between rename and re-create
        if (stat.st_dev, stat.st_ino) != (self.id.device, self.id.inode):
            rest = self._complete_lines(max_lines, final=True)
            if rest:
                return rest
            self._handle.close()
            self._handle = open(self.path, "rb")  # noqa: SIM115
            self.id = file_id(self.path, os.fstat(self._handle.fileno()))
            self.offset = 0
            return self._complete_lines(max_lines)
        if stat.st_size < self.offset:
            self._handle.seek(0)
            self.offset = 0
            return self._complete_lines(max_lines)
        return []

    def close(self) -> None:
        self._handle.close()
